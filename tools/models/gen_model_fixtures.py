"""Tiny random GPT-2 and BERT models saved by Hugging Face transformers, with the inputs, logits,
loss and gradients of one training step, and greedy generations: the fixtures of test/models/.

    ~/.venvs/peer/bin/python tools/models/gen_model_fixtures.py

Writes test/fixtures/models/{gpt2,bert}/ (config.json, model.safetensors as save_pretrained writes
them, expected.safetensors with inputs and results, grads.safetensors by parameter name).
"""
import json
import os

import torch
from safetensors.torch import save_file
from transformers import BertConfig, BertForSequenceClassification, GPT2Config, GPT2LMHeadModel

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "test", "fixtures", "models")


def grads_of(model):
    return {name: p.grad.detach().clone().contiguous() for name, p in model.named_parameters() if p.grad is not None}


def gpt2():
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=97, n_positions=48, n_embd=32, n_layer=2, n_head=4,
                        resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=0, eos_token_id=0,
                        initializer_range=0.3)  # wide weights: varied greedy tokens, no near-ties
    model = GPT2LMHeadModel(config).eval()
    out_dir = os.path.join(ROOT, "gpt2")
    model.save_pretrained(out_dir, safe_serialization=True)
    g = torch.Generator().manual_seed(1)
    input_ids = torch.randint(1, 97, (2, 11), generator=g)
    labels = input_ids.clone()
    labels[1, :3] = -100  # a prompt whose tokens carry no loss
    out = model(input_ids=input_ids, labels=labels)
    out.loss.backward()
    grads = grads_of(model)
    # Greedy continuation of two prompts; then the same with eos set to the 4th generated token.
    prompt = input_ids[:1, :5]
    model.generation_config.eos_token_id = None
    greedy = model.generate(prompt, max_new_tokens=20, do_sample=False, pad_token_id=0)
    new = greedy[0, 5:].tolist()
    # eos = the first generated token that differs from the first one, so generation stops mid-way.
    eos = next((t for t in new if t != new[0]), new[-1])
    stopped = model.generate(prompt, max_new_tokens=20, do_sample=False, pad_token_id=eos, eos_token_id=eos)
    save_file({
        "input_ids": input_ids.to(torch.int32), "labels": labels.to(torch.int32),
        "logits": out.logits.detach().contiguous(), "loss": out.loss.detach().reshape(1),
        "prompt": prompt.to(torch.int32).contiguous(), "greedy": greedy.to(torch.int32).contiguous(),
        "eos": torch.tensor([eos], dtype=torch.int32), "greedy_eos": stopped.to(torch.int32).contiguous(),
    }, os.path.join(out_dir, "expected.safetensors"))
    save_file(grads, os.path.join(out_dir, "grads.safetensors"))


def bert():
    torch.manual_seed(0)
    config = BertConfig(vocab_size=101, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=40, type_vocab_size=2, num_labels=3,
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
    model = BertForSequenceClassification(config).eval()
    out_dir = os.path.join(ROOT, "bert")
    model.save_pretrained(out_dir, safe_serialization=True)
    g = torch.Generator().manual_seed(2)
    input_ids = torch.randint(1, 101, (3, 9), generator=g)
    attention_mask = torch.ones(3, 9, dtype=torch.long)
    attention_mask[1, 6:] = 0
    attention_mask[2, 4:] = 0
    input_ids[attention_mask == 0] = 0
    token_type_ids = torch.zeros(3, 9, dtype=torch.long)
    token_type_ids[:, 5:] = 1
    labels = torch.tensor([2, 0, 1])
    out = model(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids, labels=labels,
                output_hidden_states=True)
    out.loss.backward()
    grads = grads_of(model)
    save_file({
        "input_ids": input_ids.to(torch.int32), "attention_mask": attention_mask.to(torch.int32),
        "token_type_ids": token_type_ids.to(torch.int32), "labels": labels.to(torch.int32),
        "logits": out.logits.detach().contiguous(), "loss": out.loss.detach().reshape(1),
        "last_hidden_state": out.hidden_states[-1].detach().contiguous(),
    }, os.path.join(out_dir, "expected.safetensors"))
    save_file(grads, os.path.join(out_dir, "grads.safetensors"))


if __name__ == "__main__":
    gpt2()
    bert()
    for name in ("gpt2", "bert"):
        d = os.path.join(ROOT, name)
        print(name, {f: os.path.getsize(os.path.join(d, f)) for f in sorted(os.listdir(d))})
