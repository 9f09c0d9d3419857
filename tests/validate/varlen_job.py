"""varlen_job.py - GPU-host driver (not part of the product): the variable-length GPT job of
issue 29, so that advise's advice can be checked on the real job rerun with another data
order. A GPT (vocab 32000, d 1024, 8 layers, 16 heads, ffn 4096), AdamW, fp32; every step
draws batch 4..32 and sequence length 64..1024 (multiples of 32) from --seed (the data
order); --ckpt checkpoints every layer's activations (torch.utils.checkpoint).

usage: python3 varlen_job.py [--seed N] [--steps 30] [--ckpt] [--conf PYTORCH_CUDA_ALLOC_CONF]
                             [--limit-bytes N] [--record SNAPSHOT.pickle]
--limit-bytes: torch.cuda.set_per_process_memory_fraction(N / total), as the job ran under.
Prints one JSON line: completed, oom_step (null), peak_reserved, peak_allocated, steps, conf,
limit_bytes, seed; --record also dumps the memory snapshot (as the recordings were made)."""
import argparse
import json
import os
import sys

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--steps", type=int, default=30)
ap.add_argument("--ckpt", action="store_true")
ap.add_argument("--conf", default=None)
ap.add_argument("--limit-bytes", type=int, default=0)
ap.add_argument("--record", default=None)
args = ap.parse_args()
os.environ.pop("PYTORCH_ALLOC_CONF", None)
if args.conf:
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = args.conf
else:
    os.environ.pop("PYTORCH_CUDA_ALLOC_CONF", None)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.utils.checkpoint as cp  # noqa: E402

torch.cuda.init()
dev = torch.device("cuda", 0)
if args.limit_bytes:
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.set_per_process_memory_fraction(min(1.0, args.limit_bytes / total), 0)
if args.record:
    torch.cuda.memory._record_memory_history(context=None)

VOCAB, D, LAYERS, HEADS, FFN = 32000, 1024, 8, 16, 4096


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, D)
        self.blocks = nn.ModuleList(nn.TransformerEncoderLayer(D, HEADS, FFN, dropout=0.0, batch_first=True, norm_first=True)
                                    for _ in range(LAYERS))
        self.norm = nn.LayerNorm(D)
        self.head = nn.Linear(D, VOCAB, bias=False)

    def forward(self, idx):
        x = self.emb(idx)
        mask = nn.Transformer.generate_square_subsequent_mask(idx.shape[1], device=idx.device)
        for b in self.blocks:
            x = cp.checkpoint(b, x, mask, use_reentrant=False) if args.ckpt else b(x, src_mask=mask, is_causal=True)
        return self.head(self.norm(x))


torch.manual_seed(0)                       # the same model every run; --seed is the data order
model = GPT().to(dev)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
g = torch.Generator().manual_seed(args.seed)
result = {"seed": args.seed, "steps": args.steps, "ckpt": args.ckpt, "conf": args.conf or "", "limit_bytes": args.limit_bytes,
          "completed": True, "oom_step": None}
try:
    for step in range(args.steps):
        b = 4 + int(torch.randint(0, 29, (1,), generator=g))
        s = 64 + 32 * int(torch.randint(0, 31, (1,), generator=g))
        idx = torch.randint(0, VOCAB, (b, s), generator=g).to(dev)
        logits = model(idx[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), idx[:, 1:].reshape(-1))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        del logits, loss
    torch.cuda.synchronize()
except torch.OutOfMemoryError as e:
    result["completed"] = False
    result["oom_step"] = step
    result["oom_message"] = str(e).splitlines()[0][:600]
result["peak_reserved"] = torch.cuda.max_memory_reserved(dev)
result["peak_allocated"] = torch.cuda.max_memory_allocated(dev)
if args.record:
    import pickle
    with open(args.record, "wb") as f:
        pickle.dump(torch.cuda.memory._snapshot(), f)
print(json.dumps(result))
sys.exit(0)
