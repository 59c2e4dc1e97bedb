// GPT-2 and BERT against Hugging Face transformers: tiny random models saved by
// tools/models/gen_model_fixtures.py load here and give HF's logits, loss and gradients.
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import * as rt from "../../src/index.js";
import type { Tensor } from "../../src/index.js";
import { models, serialization } from "../../src/index.js";
import { assertClose } from "../helpers.js";

const FIXTURES = new URL("../fixtures/models/", import.meta.url).pathname;
const tmp = mkdtempSync(join(tmpdir(), "ringtorch-models-"));
after(() => rmSync(tmp, { recursive: true, force: true }));

const conv1d = (name: string) => /\.(c_attn|c_proj|c_fc)\.weight$/.test(name);

/** Every named gradient of the model equals HF's (Conv1D ones transposed back to HF's layout). */
function checkGrads(model: rt.nn.Module, expected: Record<string, Tensor>, transposed: (n: string) => boolean): void {
  const params = Object.fromEntries(model.namedParameters());
  assert.deepEqual(Object.keys(params).sort(), Object.keys(expected).sort());
  for (const [name, g] of Object.entries(expected)) {
    const ours = params[name].grad!;
    assertClose(transposed(name) ? rt.transpose(ours, 0, 1) : ours, g, 2e-6, 1e-4, `grad ${name}`);
  }
}

describe("GPT2LMHeadModel from Hugging Face files", () => {
  const dir = join(FIXTURES, "gpt2");
  const expected = serialization.load(join(dir, "expected.safetensors"));

  it("gives HF's logits (1e-5), loss, and the gradients of one step", () => {
    const model = models.GPT2LMHeadModel.fromPretrained(dir);
    const { logits, loss } = model.call(expected.input_ids, { labels: expected.labels });
    assertClose(logits, expected.logits, 1e-5, 0, "logits");
    assertClose(loss!, expected.loss.reshape([]), 1e-5, 1e-6, "loss");
    loss!.backward();
    checkGrads(model, serialization.load(join(dir, "grads.safetensors")), conv1d);
  });

  it("savePretrained writes HF's names, shapes and layout, and loads back to the same logits", () => {
    const model = models.GPT2LMHeadModel.fromPretrained(dir);
    const out = join(tmp, "gpt2-saved");
    model.savePretrained(out);
    const theirs = serialization.load(join(dir, "model.safetensors"));
    const ours = serialization.load(join(out, "model.safetensors"));
    assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
    for (const [k, t] of Object.entries(theirs)) assertClose(ours[k], t, 0, 0, k);
    const config = JSON.parse(readFileSync(join(out, "config.json"), "utf8"));
    assert.equal(config.n_embd, 32);
    assert.deepEqual(config.architectures, ["GPT2LMHeadModel"]);
    const again = models.GPT2LMHeadModel.fromPretrained(out);
    assertClose(again.call(expected.input_ids).logits, expected.logits, 1e-5, 0, "reloaded logits");
  });

  it("GPT2Model loads the LM file (prefix stripped) and gives its hidden states", () => {
    const base = models.GPT2Model.fromPretrained(dir);
    const lm = models.GPT2LMHeadModel.fromPretrained(dir);
    const h = base.call(expected.input_ids).lastHiddenState;
    assertClose(rt.linear(h, lm.transformer.wte.weight), expected.logits, 1e-5, 0, "logits via GPT2Model");
  });

  it("logitsToKeep gives HF's logits of the last positions only", () => {
    const model = models.GPT2LMHeadModel.fromPretrained(dir);
    const l = expected.logits.shape[1];
    for (const k of [1, 2, l, l + 3]) {
      const kept = Math.min(k, l);
      assertClose(model.call(expected.input_ids, { logitsToKeep: k }).logits, expected.logits.narrow(1, l - kept, kept), 1e-5, 0, `logitsToKeep ${k}`);
    }
    assert.throws(() => model.call(expected.input_ids, { logitsToKeep: -1 }), /logitsToKeep must be a non-negative integer \(0 keeps all\), got -1/);
    assert.throws(() => model.call(expected.input_ids, { logitsToKeep: 1, labels: expected.labels }), /logitsToKeep and labels cannot go together/);
  });

  it("bad input: a config that disagrees with the weights, a missing file, bad ids", () => {
    const bad = join(tmp, "gpt2-bad");
    cpSync(dir, bad, { recursive: true });
    const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
    writeFileSync(join(bad, "config.json"), JSON.stringify({ ...config, n_inner: 100 }));
    assert.throws(() => models.GPT2LMHeadModel.fromPretrained(bad), /tensor "transformer\.h\.0\.mlp\.c_fc\.weight" has shape \[32, 128\] in .*model\.safetensors, but the model built from config\.json needs \[32, 100\] \(stored transposed/);
    writeFileSync(join(bad, "config.json"), JSON.stringify({ ...config, n_positions: 64 }));
    assert.throws(() => models.GPT2LMHeadModel.fromPretrained(bad), /"transformer\.wpe\.weight" has shape \[48, 32\].*needs \[64, 32\]/);
    rmSync(join(bad, "model.safetensors"));
    assert.throws(() => models.GPT2LMHeadModel.fromPretrained(bad), /no model\.safetensors .*in .*gpt2-bad/);
    assert.throws(() => models.GPT2LMHeadModel.fromPretrained(join(tmp, "nowhere")), /no config\.json in .*nowhere/);
    const model = models.GPT2LMHeadModel.fromPretrained(dir);
    assert.throws(() => model.call(rt.zeros([1, 49], { dtype: "int32" })), /49 positions .* exceed config\.n_positions = 48/);
    assert.throws(() => model.call(rt.zeros([1, 4])), /inputIds must be an int32 tensor \[batch, seq\], got float32 \[1, 4\]/);
  });
});

describe("BertForSequenceClassification from Hugging Face files", () => {
  const dir = join(FIXTURES, "bert");
  const expected = serialization.load(join(dir, "expected.safetensors"));
  const inputs = () => ({ attentionMask: expected.attention_mask, tokenTypeIds: expected.token_type_ids });

  it("gives HF's logits (1e-5), hidden states, loss and gradients with padding and segments", () => {
    const model = models.BertForSequenceClassification.fromPretrained(dir);
    const { logits, loss } = model.call(expected.input_ids, { ...inputs(), labels: expected.labels });
    assertClose(logits, expected.logits, 1e-5, 0, "logits");
    assertClose(loss!, expected.loss.reshape([]), 1e-5, 1e-6, "loss");
    const hidden = model.bert.call(expected.input_ids, inputs()).lastHiddenState;
    // HF's hidden states at padded positions are also defined (padded queries still attend): compare all.
    assertClose(hidden, expected.last_hidden_state, 1e-5, 1e-5, "last hidden state");
    loss!.backward();
    checkGrads(model, serialization.load(join(dir, "grads.safetensors")), () => false);
  });

  it("saves HF's file and loads back; BertModel loads the classifier's file", () => {
    const model = models.BertForSequenceClassification.fromPretrained(dir);
    const out = join(tmp, "bert-saved");
    model.savePretrained(out);
    const theirs = serialization.load(join(dir, "model.safetensors"));
    const ours = serialization.load(join(out, "model.safetensors"));
    assert.deepEqual(Object.keys(ours).sort(), Object.keys(theirs).sort());
    for (const [k, t] of Object.entries(theirs)) assertClose(ours[k], t, 0, 0, k);
    const base = models.BertModel.fromPretrained(out);
    assertClose(base.call(expected.input_ids, inputs()).lastHiddenState, expected.last_hidden_state, 1e-5, 1e-5, "BertModel");
    // And a classifier starts from a base model's file with a fresh head (HF's fine-tuning start).
    const baseDir = join(tmp, "bert-base");
    base.savePretrained(baseDir);
    const tuned = models.BertForSequenceClassification.fromPretrained(baseDir);
    assertClose(tuned.bert.call(expected.input_ids, inputs()).lastHiddenState, expected.last_hidden_state, 1e-5, 1e-5, "classifier from base");
  });

  it("a label outside the classes is a clear error", () => {
    const model = models.BertForSequenceClassification.fromPretrained(dir);
    const labels = rt.tensor([0, 3, 1], { dtype: "int32" });
    assert.throws(() => model.call(expected.input_ids, { ...inputs(), labels }), /labels must be class ids in \[0, 2\] \(config\.num_labels = 3\), got 3/);
  });
});
