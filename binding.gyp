{
  "targets": [
    {
      "target_name": "svc_spawn",
      "sources": ["src/executor/native/spawn.c"],
      "cflags": ["-O2", "-Wall"],
      "conditions": [["OS!='linux'", {"type": "none", "sources": []}]]
    }
  ]
}
