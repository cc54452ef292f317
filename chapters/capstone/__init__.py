"""The capstone (训练循环): one training loop joining the four chapters.

* :mod:`.recipe` — the run's settings, data shards and starting weights, shared
  by the engine and PyTorch so their loss curves can be compared step by step;
* :mod:`.clip` — ``clip_grad_norm_`` for engine parameters;
* :mod:`.engine_loop` / :mod:`.torch_loop` — one rank of the full loop (autocast
  forward, scaled backward, gradient sync, step on float32 weights, scaler
  update, zero_grad) on the engine and in PyTorch;
* :mod:`.side_by_side` — both loops on the same real processes, one launch;
* :mod:`.pitfalls` — the source text's four pitfalls (3.6) as measurements.
"""
