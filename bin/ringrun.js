#!/usr/bin/env node
// ringrun, the torchrun of ringtorch.
import { runEntry } from "./entry.js";

await runEntry("launch/main");
