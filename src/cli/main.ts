/** Entry point of `svc` (and `svcd`, which is `svc daemon run`). Filled by the CLI work. */
export function main(argv: string[]): void {
  if (argv.includes("--version")) {
    console.log("0.1.0");
    return;
  }
  console.error("svc: not yet implemented");
  process.exitCode = 1;
}
