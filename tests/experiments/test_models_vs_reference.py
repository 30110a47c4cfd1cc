"""Each protocol model against the reference programs, through the real harness and
engine: the model error must stay within what BENCHMARKS.md ("The references")
reports for these regimes. Fixed seeds, so the link makes the same decisions each time.

The models assume no processing time, so every case is on the 25 ms link, where an
exchange takes 51 ms: on a host that steals CPU time the programs lose a few ms an
exchange, which at 5 ms (11 ms an exchange) costs stop-and-wait far more of its goodput
than here (BENCHMARKS.md, "The references")."""

from dataclasses import replace


from harness.experiments.sweep import run_sweeps, summarize_cells
from assignments.comn import sheet as comn

SIZE = 200 << 10
# (question, cell, model, largest |error| allowed): regimes where the models hold.
CASES = [
    ("q1", {"delay": 25, "loss": 5, "timeout": 60}, lambda c: comn.q1_model(c, SIZE).throughput_kBps, 0.20),
    ("q3", {"delay": 25, "loss": 5, "timeout": 60, "window": 4}, comn.q3_model, 0.40),
    ("q5", {"delay": 25, "loss": 5, "timeout": 60, "window": 8}, comn.q5_model, 0.40),
]


def test_models_agree_with_the_reference(capsys):
    sheet = comn.build(comn.REFERENCE, replace(comn.QUICK, size=SIZE), "auto", runs=3, questions=("q1", "q3", "q5"))
    by_name = {s.name: s for s in sheet.sweeps}
    sweeps = [replace(by_name[q], cells=[cell]) for q, cell, _, _ in CASES]
    frames = run_sweeps(sweeps, jobs=6, progress=False)
    for (q, cell, model, bound), sweep in zip(CASES, sweeps):
        row = summarize_cells(frames[q], sweep.param_names, "goodput_kBps").iloc[0]
        assert row["n"] == 3, frames[q]["error"].tolist()
        error = (model(cell) - row["mean"]) / row["mean"]
        with capsys.disabled():
            print(
                f"\n{q} {cell}: measured {row['mean']:.1f} KB/s, model {model(cell):.1f} ({error:+.0%}); "
                f"steal up to {frames[q]['steal'].max():.1%}, engine p99 lag up to {frames[q]['lag_p99_us'].max() / 1000:.1f} ms"
            )
        assert abs(error) < bound
