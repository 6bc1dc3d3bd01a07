import { defineConfig } from "vite";
import preact from "@preact/preset-vite";

// Root is src/web (scripts/build-web.mjs). The daemon serves dist/web at `/`
// (or under api.base_path), so every URL in the build is relative: base "./".
export default defineConfig({
  base: "./",
  plugins: [preact()],
  build: {
    outDir: "../../dist/web",
    emptyOutDir: true,
    target: "es2022",
    sourcemap: false,
    assetsDir: "assets",
    reportCompressedSize: false,
  },
});
