"""Checks that models saved by ringtorch's savePretrained load into Hugging Face transformers and
give ringtorch's logits; records the result in test/fixtures/models/roundtrip.json.

    ~/.venvs/peer/bin/python tools/models/check_roundtrip.py
"""
import json
import os
import subprocess
import tempfile

import torch
from safetensors.torch import load_file
from transformers import BertForSequenceClassification, GPT2LMHeadModel

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.join(HERE, "..", "..")

with tempfile.TemporaryDirectory() as out:
    subprocess.run(["node", "--import", "tsx", os.path.join(HERE, "save_trained.ts"), out], cwd=REPO, check=True)
    result = {}
    for name, cls, extra in (("gpt2", GPT2LMHeadModel, ()), ("bert", BertForSequenceClassification, ("attention_mask", "token_type_ids"))):
        d = os.path.join(out, name)
        model = cls.from_pretrained(d).eval()
        ours = load_file(os.path.join(d, "ringtorch_logits.safetensors"))
        kwargs = {k: ours[k].long() for k in extra}
        with torch.no_grad():
            logits = model(input_ids=ours["input_ids"].long(), **kwargs).logits
        diff = float((logits - ours["logits"]).abs().max())
        result[name] = {"architecture": cls.__name__, "max_abs_logit_diff": diff, "loaded_by_transformers": True, "ok": diff < 1e-5}
        print(name, result[name])
    with open(os.path.join(REPO, "test", "fixtures", "models", "roundtrip.json"), "w") as f:
        json.dump(result, f, indent=2)
        f.write("\n")
