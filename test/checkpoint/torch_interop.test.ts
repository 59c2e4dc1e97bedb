import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as rt from "../../src/index.js";

const torchMissing = existsSync("/usr/lib/python3/dist-packages/torch") ? false : "Debian's python3-torch is not installed (apt-get install -y python3-torch)";

test("a model saved in a ringtorch checkpoint loads into the same model built in PyTorch", { skip: torchMissing }, async () => {
  const dir = mkdtempSync(join(tmpdir(), "ringtorch-interop-"));
  try {
    rt.manualSeed(3);
    const model = new rt.nn.Sequential(new rt.nn.Linear(6, 16), new rt.nn.ReLU(), new rt.nn.Linear(16, 3));
    const optimizer = new rt.optim.Adam(model.parameters());
    const x = rt.randn([4, 6]);
    await rt.checkpoint.save(dir, { model, optimizer, epoch: 1 }, { step: 1 });
    writeFileSync(join(dir, "probe.json"), JSON.stringify({ layers: [[6, 16], [16, 3]], x: x.toArray(), y: model.call(x).toArray() }));
    const r = spawnSync("/usr/bin/python3", ["tools/check_checkpoint_torch.py", join(dir, "step_00000001"), join(dir, "probe.json")], { encoding: "utf8" });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    assert.match(r.stdout, /^OK: 4 tensors loaded strictly/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
