#!/usr/bin/env node
import { main } from "../dist/cli/main.js";

// `svcd` is `svc daemon run`: the daemon in the foreground.
main(["daemon", "run", ...process.argv.slice(2)]);
