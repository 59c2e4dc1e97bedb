#!/usr/bin/env node
// ringtorch's command line: `ringtorch report <experiment dir>`.
import { runEntry } from "./entry.js";

await runEntry("track/report/cli");
