// A short run of examples/fashion_mnist.ts (the full run, the command on its first line, reaches about
// 89% test accuracy in 8 epochs): on 4,000 training images for one epoch it must already classify
// most test images, which only a working model, loss, optimizer and data pipeline can do.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { it } from "node:test";
import { trainFashionMnist } from "../../examples/fashion_mnist.js";

const DATA = "/usr/share/datasets/fashion-mnist";
const present = existsSync(`${DATA}/train-images-idx3-ubyte.gz`);

it("the Fashion-MNIST example learns (short run)", { skip: present ? false : `${DATA} is absent (Debian's dataset-fashion-mnist package)` }, async () => {
  const lines: string[] = [];
  const acc = await trainFashionMnist({ epochs: 1, trainLimit: 4000, testLimit: 2000, log: (l) => lines.push(l) });
  assert.equal(lines.length, 1);
  assert.ok(acc >= 0.75, `test accuracy ${acc} after one short epoch; expected at least 0.75`);
});
