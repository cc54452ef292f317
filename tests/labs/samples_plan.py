"""The sample submissions of every lab, and how to regenerate them.

``python -m tests.labs.samples_plan`` rewrites ``labs/*/samples/`` from each lab's
source notebook:

* ``full_marks.ipynb`` — the source with its solutions, markers dropped;
* ``untouched.ipynb`` — the release (:func:`autograder.release.release_notebook`);
* ``partial_unsolved.ipynb`` — the full solution except the exercises in
  :data:`UNSOLVED`, which are left as released;
* ``partial_buggy.ipynb`` — the full solution except one exercise whose body is
  replaced by the plausible mistake in :data:`BUGGY`.

The scores these must get are written in ``test_samples.py`` from these plans and
the specs' references, not from the grader's output.
"""

from __future__ import annotations

import copy

import nbformat

from autograder.notebook import exercise_meta, read_notebook, solution_only, strip_solutions
from autograder.release import INSTRUCTOR_TAG, release_notebook
from autograder.spec import load_lab

from .labkit import LAB_IDS, LABS_DIR

UNSOLVED = {
    "lab1_graph": ("topological_sort", "fusion_groups"),
    "lab2_autodiff": ("vjp_div", "backward"),
    "lab3_distributed": ("ring_all_reduce", "column_parallel_backward"),
    "lab4_amp": ("classify_fp16", "master_weight_step"),
}

# exercise id -> (the solution region's replacement, the cases it fails: a predicate on
# (case, expected value)). Each is a mistake learners make.
BUGGY = {
    "lab1_graph": ("topological_sort", '''
    inputs = {n["name"]: n["inputs"] for n in graph["nodes"]}
    order, seen = [], set()
    for root in graph["outputs"]:          # forgets grey nodes: cannot see a cycle
        if root in seen:
            continue
        seen.add(root)
        stack = [(root, iter(inputs[root]))]
        while stack:
            name, pending = stack[-1]
            child = next(pending, None)
            if child is None:
                stack.pop()
                order.append(name)
            elif child not in seen:
                seen.add(child)
                stack.append((child, iter(inputs[child])))
    return order
'''),
    "lab2_autodiff": ("accumulate_gradients", '''
    parts = [mse_and_grad(w, X[s:s + micro_batch_size], y[s:s + micro_batch_size])
             for s in range(0, len(y), micro_batch_size)]
    # averages over micro-batches: right only when they all have the same size
    return {"loss": float(np.mean([p[0] for p in parts])),
            "grad": np.mean([p[1] for p in parts], axis=0)}
'''),
    "lab3_distributed": ("assign_buckets", '''
    open_buckets, used_limits, done = {}, {}, []
    for index, (numel, dtype) in enumerate(zip(numels, dtypes, strict=True)):
        members, size = open_buckets.get(dtype, ([], 0))
        members, size = members + [index], size + numel * ELEMENT_BYTES[dtype]
        limit = first_bucket_cap_bytes if used_limits.get(dtype, 0) == 0 else bucket_cap_bytes
        if size > limit:                   # off by one: a bucket filled exactly stays open
            done.append(members)
            used_limits[dtype] = used_limits.get(dtype, 0) + 1
            open_buckets.pop(dtype, None)
        else:
            open_buckets[dtype] = (members, size)
    done += [members for members, _ in open_buckets.values()]
    done.sort(key=min)
    return done[::-1]
'''),
    "lab4_amp": ("update_scale", '''
    scale = np.float32(scale)
    if found_inf:
        return [float(scale * np.float32(backoff_factor)), 0]
    successful = growth_tracker + 1
    if successful == growth_interval:      # forgets that growth must stay finite
        with np.errstate(over="ignore"):
            return [float(scale * np.float32(growth_factor)), 0]
    return [float(scale), successful]
'''),
}


def _replace_solution(source: str, replacement: str) -> str:
    lines = source.splitlines()
    begin = next(i for i, line in enumerate(lines) if line.strip() == "### BEGIN SOLUTION")
    end = next(i for i, line in enumerate(lines) if line.strip() == "### END SOLUTION")
    return "\n".join(lines[:begin] + replacement.strip("\n").splitlines() + lines[end + 1:])


def _clear(nb):
    """Outputs cleared and the instructor's cells dropped, as a learner's copy has them."""
    nb.cells = [c for c in nb.cells if INSTRUCTOR_TAG not in c.metadata.get("tags", [])]
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    return nb


def build(lab_id: str) -> dict[str, nbformat.NotebookNode]:
    """Every sample of ``lab_id``: file name -> notebook."""
    lab = load_lab(lab_id)
    source = _clear(read_notebook(lab.source))

    def variant(solve):
        nb = copy.deepcopy(source)
        for cell in nb.cells:
            meta = exercise_meta(cell)
            if meta is not None:
                cell.source = solve(meta["id"], cell.source)
        return nb

    samples = {
        "full_marks.ipynb": variant(lambda eid, src: solution_only(src)),
        "untouched.ipynb": release_notebook(lab),
        "partial_unsolved.ipynb": variant(
            lambda eid, src: strip_solutions(src, eid) if eid in UNSOLVED[lab_id]
            else solution_only(src)),
    }
    if lab_id in BUGGY:
        buggy_id, body = BUGGY[lab_id]
        samples["partial_buggy.ipynb"] = variant(
            lambda eid, src: _replace_solution(src, body) if eid == buggy_id
            else solution_only(src))
    return samples


def main() -> None:
    for lab_id in LAB_IDS:
        folder = LABS_DIR / lab_id / "samples"
        folder.mkdir(exist_ok=True)
        for name, nb in build(lab_id).items():
            nbformat.write(nb, folder / name)
            print(f"wrote {folder / name}")


if __name__ == "__main__":
    main()
