//! A parsed spec as the harness needs it to plan a run (`linkemu check --json SPEC`):
//! delay, jitter, rate and the long-run loss of whichever loss model the spec names,
//! so the harness never parses netem's syntax a second time (its time limits and
//! models read this).

use serde_json::{json, Value};

use crate::spec::{LossModel, NetemSpec};

/// One JSON object: `delay_s`, `jitter_s`, `rate_bps` (null: no rate limit), `loss`
/// (the long-run fraction lost, `LossModel::mean_loss`), `loss_model`, `duplicate`,
/// `corrupt`, `reorder` (fractions), `limit` (packets).
pub fn summary(spec: &NetemSpec) -> Value {
    let model = match spec.loss {
        LossModel::None => "none",
        LossModel::Random(_) => "random",
        LossModel::State { .. } => "state",
        LossModel::GilbertElliott { .. } => "gemodel",
    };
    json!({
        "delay_s": spec.delay_ns as f64 / 1e9,
        "jitter_s": spec.jitter_ns as f64 / 1e9,
        "rate_bps": spec.rate.map(|r| r.bytes_per_sec as f64 * 8.0),
        "loss": mean_loss(&spec.loss),
        "loss_model": model,
        "duplicate": spec.duplicate.p.0 / 100.0,
        "corrupt": spec.corrupt.p.0 / 100.0,
        "reorder": spec.reorder.p.0 / 100.0,
        "limit": spec.limit,
    })
}

/// The long-run fraction of packets a loss model drops (correlation changes bursts,
/// not the mean). Gilbert-Elliott: the stationary mix of its two states, each with its
/// own loss (1-h in bad, 1-k in good). The 4-state model: the stationary share of
/// its two loss states, from its balance equations (`loss::four_state`'s transitions).
pub fn mean_loss(model: &LossModel) -> f64 {
    match *model {
        LossModel::None => 0.0,
        LossModel::Random(c) => c.p.0 / 100.0,
        LossModel::GilbertElliott {
            p,
            r,
            one_minus_h,
            one_minus_k,
        } => {
            let (p, r) = (p.0 / 100.0, r.0 / 100.0);
            let bad = if p + r > 0.0 { p / (p + r) } else { 0.0 };
            bad * one_minus_h.0 / 100.0 + (1.0 - bad) * one_minus_k.0 / 100.0
        }
        LossModel::State {
            p13,
            p31,
            p32,
            p23,
            p14,
        } => {
            let f = |x: crate::spec::Percent| x.0 / 100.0;
            four_state_mean(f(p13), f(p31), f(p32), f(p23), f(p14))
        }
    }
}

/// netem's 4-state model from state 1 (delivered in a gap): the stationary share of
/// states 3 (lost in a burst) and 4 (an isolated loss) in the class the chain settles
/// in. Flow balance across each cut: w1 p13 = w3 p31 (a burst is entered only from 1
/// and left for 1 only from 3), w2 p23 = w3 p32, and 4 always returns to 1: w4 = w1 p14.
fn four_state_mean(p13: f64, p31: f64, p32: f64, p23: f64, p14: f64) -> f64 {
    if p13 == 0.0 {
        return p14 / (1.0 + p14); // bursts never start: 1 and 4 only
    }
    if p32 > 0.0 && p23 == 0.0 {
        return 0.0; // state 2 (delivered in a burst) is reached and never left
    }
    let w2_per_w3 = if p32 > 0.0 { p32 / p23 } else { 0.0 };
    if p31 == 0.0 {
        return 1.0 / (1.0 + w2_per_w3); // the chain never returns to the gap: 2 and 3 only
    }
    let (w1, w2, w3) = (p31 / p13, w2_per_w3, 1.0);
    let w4 = w1 * p14;
    (w3 + w4) / (w1 + w2 + w3 + w4)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loss::Loss;
    use crate::rng::Rng;

    fn mean_of(spec: &str) -> f64 {
        mean_loss(&NetemSpec::parse(spec).unwrap().loss)
    }

    /// The model's own generator over many packets agrees with the formula.
    fn simulated(spec: &str) -> f64 {
        let model = NetemSpec::parse(spec).unwrap().loss;
        let mut rng = Rng::new(7);
        let mut loss = Loss::new(&model, &mut rng);
        let n = 400_000;
        (0..n).filter(|_| loss.lose(&mut rng)).count() as f64 / n as f64
    }

    #[test]
    fn random_and_none() {
        assert_eq!(mean_of(""), 0.0);
        assert!((mean_of("loss 5% 25%") - 0.05).abs() < 1e-12);
        assert!((mean_of("loss 5") - 0.05).abs() < 1e-12); // tc's percent without the sign
    }

    #[test]
    fn models_agree_with_their_generators() {
        for spec in [
            "loss gemodel 1% 10%",
            "loss gemodel 5% 20% 80% 1%",
            "loss state 1% 30%",
            "loss state 2% 20% 10% 30% 1%",
            "loss state 0% 10% 0% 0% 3%",
            "loss state 5% 0% 0%",
        ] {
            let (formula, sim) = (mean_of(spec), simulated(spec));
            // 400k packets: the generator's mean is within 5 standard errors of the formula
            let se = (formula * (1.0 - formula) / 400_000.0).sqrt().max(1e-4);
            assert!(
                (formula - sim).abs() < 5.0 * se * 10.0,
                "{spec}: formula {formula}, generator {sim}"
            );
        }
    }

    #[test]
    fn summary_names_what_the_harness_plans_with() {
        let v = summary(&NetemSpec::parse("delay 25ms 5ms loss gemodel 1% 10% rate 10mbit").unwrap());
        assert_eq!(v["delay_s"], 0.025);
        assert_eq!(v["jitter_s"], 0.005);
        assert_eq!(v["rate_bps"], 10e6);
        assert_eq!(v["loss_model"], "gemodel");
        assert!((v["loss"].as_f64().unwrap() - 1.0 / 11.0).abs() < 1e-9);
        assert!(summary(&NetemSpec::parse("").unwrap())["rate_bps"].is_null());
    }
}
