// Loads the tiny HF fixtures, takes one AdamW step on each (so the weights are ringtorch's own),
// saves them with savePretrained and writes their logits: check_roundtrip.py then loads the
// directories with transformers. Run by that script:
//   node --import tsx tools/models/save_trained.ts OUT_DIR
import { join } from "node:path";
import { models, optim, serialization } from "../../src/index.js";

const out = process.argv[2];
if (!out) throw new Error("usage: save_trained.ts OUT_DIR");
const fixtures = new URL("../../test/fixtures/models/", import.meta.url).pathname;

const gptExpected = serialization.load(join(fixtures, "gpt2", "expected.safetensors"));
const gpt = models.GPT2LMHeadModel.fromPretrained(join(fixtures, "gpt2"));
const gptOpt = new optim.AdamW(gpt.parameters(), { lr: 0.01 });
gpt.call(gptExpected.input_ids, { labels: gptExpected.labels }).loss!.backward();
gptOpt.step();
gpt.savePretrained(join(out, "gpt2"));
serialization.save({ input_ids: gptExpected.input_ids, logits: gpt.call(gptExpected.input_ids).logits }, join(out, "gpt2", "ringtorch_logits.safetensors"));

const bertExpected = serialization.load(join(fixtures, "bert", "expected.safetensors"));
const extra = { attentionMask: bertExpected.attention_mask, tokenTypeIds: bertExpected.token_type_ids };
const bert = models.BertForSequenceClassification.fromPretrained(join(fixtures, "bert"));
const bertOpt = new optim.AdamW(bert.parameters(), { lr: 0.01 });
bert.call(bertExpected.input_ids, { ...extra, labels: bertExpected.labels }).loss!.backward();
bertOpt.step();
bert.savePretrained(join(out, "bert"));
serialization.save(
  { input_ids: bertExpected.input_ids, attention_mask: bertExpected.attention_mask, token_type_ids: bertExpected.token_type_ids, logits: bert.call(bertExpected.input_ids, extra).logits },
  join(out, "bert", "ringtorch_logits.safetensors"),
);
