//! Property tests: the spec parser never panics and round-trips what it accepts;
//! the link never panics and never holds more than `limit` packets.

use linkemu::link::Link;
use linkemu::spec::NetemSpec;
use proptest::prelude::*;

/// Tokens that make plausible (and implausible) specs.
fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "delay",
            "loss",
            "random",
            "state",
            "gemodel",
            "corrupt",
            "duplicate",
            "reorder",
            "gap",
            "rate",
            "limit",
            "seed",
            "distribution",
            "normal",
            "pareto",
            "paretonormal",
            "uniform",
            "ecn",
            "slot",
            "d",
            "r",
            "lat",
            "drop",
            "%",
            "-",
            "",
            "1e309",
            "nan",
            "-0",
            "packets",
            "bytes",
            "p",
            "b",
        ])
        .prop_map(String::from),
        (
            0u32..2000,
            prop::sample::select(vec![
                "", "%", "ms", "us", "s", "ns", "mbit", "kbit", "bit", "mbps", "xs", "e5"
            ])
        )
            .prop_map(|(n, u)| format!("{n}{u}")),
        (0.0f64..150.0, prop::sample::select(vec!["%", "", "ms"])).prop_map(|(x, u)| format!("{x}{u}")),
        "-?[0-9]{1,12}",
        any::<String>(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn parser_never_panics_on_any_string(s in any::<String>()) {
        let _ = NetemSpec::parse(&s);
    }

    #[test]
    fn parser_never_panics_and_round_trips(tokens in prop::collection::vec(token(), 0..12)) {
        let s = tokens.join(" ");
        match NetemSpec::parse(&s) {
            Ok(spec) => prop_assert_eq!(NetemSpec::parse(&spec.to_string()), Ok(spec)),
            Err(e) => {
                let line = e.to_string();
                prop_assert!(!line.contains('\n'));
                prop_assert!(line.starts_with("bad spec"));
            }
        }
    }
}

/// Specs the link is driven with: every impairment, small limits.
fn link_spec() -> impl Strategy<Value = String> {
    (
        0u32..50,
        0u32..20,
        prop::sample::select(vec!["", " distribution normal", " distribution pareto", " distribution paretonormal"]),
        prop::sample::select(vec![
            "",
            " loss 10%",
            " loss 30% 50%",
            " loss state 5% 30% 10% 20% 1%",
            " loss gemodel 5% 20% 80% 1%",
        ]),
        0u32..=100,
        0u32..=100,
        1u32..=100,
        1u32..6,
        prop::sample::select(vec!["", " rate 1mbit", " rate 100kbit 20 64 4", " rate 1gbit -30"]),
        (1u32..40, prop::sample::select(vec!["", " slot 1ms 3ms packets 2", " slot distribution pareto 2ms 1ms bytes 3000"])),
    )
        .prop_map(|(delay, jitter, dist, loss, dup, corrupt, reorder, gap, rate, (limit, slot))| {
            let jitter = if dist.is_empty() { jitter } else { jitter.max(1) };
            format!(
                "delay {}ms {jitter}ms{dist}{loss} duplicate {dup}% corrupt {corrupt}% reorder {reorder}% gap {gap}{rate}{slot} limit {limit}",
                delay + 1
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn link_never_panics_nor_exceeds_limit(
        s in link_spec(),
        seed in any::<u64>(),
        arrivals in prop::collection::vec((0u64..5_000_000, 0usize..1500, 0usize..1600, 0usize..1600, any::<bool>()), 1..400),
        change in prop::option::of(link_spec()),
    ) {
        let spec = NetemSpec::parse(&s).unwrap();
        let limit = spec.limit as usize;
        let mut link = Link::new(spec, seed);
        let mut now = 0u64;
        let mut held: i64 = 0;
        for (k, (gap, len, a, b, drain)) in arrivals.into_iter().enumerate() {
            now += gap;
            if k == 100 {
                if let Some(c) = &change {
                    link.set_spec(NetemSpec::parse(c).unwrap());
                }
            }
            let lim = link.spec().limit as usize;
            let v = link.enqueue(now, vec![0xa5; len], a.min(b)..a.max(b), k as u32);
            held += v.queued() as i64;
            prop_assert!(link.queue_len() <= lim.max(limit));
            prop_assert_eq!(link.queue_len() as i64, held);
            if drain {
                while let Some(d) = link.dequeue(now) {
                    prop_assert!(d.due <= now);
                    prop_assert!(d.arrived <= d.due);
                    held -= 1;
                }
            }
            if let Some(t) = link.next_due() {
                prop_assert!(t < u64::MAX);
            }
        }
        while link.dequeue(u64::MAX).is_some() {
            held -= 1;
        }
        prop_assert_eq!(held, 0);
        prop_assert_eq!(link.queue_len(), 0);
    }
}
