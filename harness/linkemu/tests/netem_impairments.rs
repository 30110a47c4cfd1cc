//! Loss, duplication, corruption and reordering: fractions against 99.9% binomial
//! bounds over 100k simulated packets, netem's order of operations, determinism.

mod common;
use common::*;
use linkemu::link::{Fate, Link, Verdict};

const N: usize = 100_000;
const MS: u64 = 1_000_000;

/// Which arrivals netem's reorder sent at once, ahead of the queue.
fn reordered_indices(r: &Run) -> Vec<usize> {
    let reordered = |v: &Verdict| matches!(v.original, Fate::Queued { reordered: true, .. });
    r.verdicts
        .iter()
        .enumerate()
        .filter(|(_, v)| reordered(v))
        .map(|(i, _)| i)
        .collect()
}

fn fresh(s: &str, seed: u64) -> Link {
    Link::new(spec(s), seed)
}

#[test]
fn random_loss_fraction() {
    for (s, p) in [("loss 5%", 0.05), ("loss random 0.5%", 0.005), ("loss 28%", 0.28)] {
        let r = run(&mut fresh(s, 1), N, 100_000, 100);
        let lost = r.verdicts.iter().filter(|v| v.original == Fate::Lost).count();
        assert_binomial(s, lost, N, p);
        assert_eq!(r.departures.len(), N - lost);
    }
}

#[test]
fn loss_extremes() {
    let r = run(&mut fresh("loss 100%", 1), 1000, 1000, 10);
    assert!(r.verdicts.iter().all(|v| v.original == Fate::Lost));
    assert!(r.departures.is_empty());
    let r = run(&mut fresh("loss 0%", 1), 1000, 1000, 10);
    assert_eq!(r.departures.len(), 1000);
}

#[test]
fn correlated_loss_clusters_and_runs_below_p_as_in_netem() {
    // netem's correlated random is a weighted mean of a fresh uniform and the last
    // value, which pulls values towards 1/2: losses cluster, and (a known netem quirk,
    // reproduced on purpose) fewer than P% are lost.
    let r = run(&mut fresh("loss 30% 50%", 2), N, 1000, 10);
    let lost: Vec<bool> = r.verdicts.iter().map(|v| v.original == Fate::Lost).collect();
    let rate = lost.iter().filter(|&&l| l).count() as f64 / N as f64;
    let after_loss = lost.windows(2).filter(|w| w[0]).count();
    let loss_after_loss = lost.windows(2).filter(|w| w[0] && w[1]).count();
    let conditional = loss_after_loss as f64 / after_loss as f64;
    assert!(rate > 0.05 && rate < 0.25, "loss rate {rate}");
    assert!(conditional > 2.0 * rate, "P(loss | loss) {conditional} vs {rate}");
}

#[test]
fn duplicate_fraction_and_copies_are_identical() {
    let r = run(&mut fresh("duplicate 10%", 3), N, 100_000, 64);
    let dups = r.verdicts.iter().filter(|v| v.duplicate.is_some()).count();
    assert_binomial("duplicate 10%", dups, N, 0.10);
    assert_eq!(r.departures.len(), N + dups);
    let copies: Vec<_> = r.departures.iter().filter(|d| d.duplicate).collect();
    assert_eq!(copies.len(), dups);
    // Each copy leaves right before its original (netem enqueues it first), with the same bytes.
    for w in r.departures.windows(2) {
        if w[0].duplicate {
            assert!(!w[1].duplicate);
            assert_eq!(w[0].data, w[1].data);
        }
    }
}

#[test]
fn corrupt_fraction_flips_exactly_one_bit_in_range() {
    let size = 200;
    let r = run(&mut fresh("corrupt 5%", 4), N, 100_000, size);
    let corrupted = r
        .verdicts
        .iter()
        .filter(|v| matches!(v.original, Fate::Queued { corrupted: true, .. }))
        .count();
    assert_binomial("corrupt 5%", corrupted, N, 0.05);
    let mut flipped = 0;
    for (i, d) in r.departures.iter().enumerate() {
        // Packets are all-zero after the 8-byte number, and the number is outside the range.
        let ones: u32 = d.data[8..].iter().map(|b| b.count_ones()).sum();
        assert_eq!(ones, d.corrupted as u32);
        assert_eq!(packet_number(d) as usize, i);
        flipped += ones as usize;
    }
    assert_eq!(flipped, corrupted);
}

#[test]
fn corrupt_with_empty_range_damages_nothing() {
    let mut link = fresh("corrupt 100%", 5);
    let v = link.enqueue(0, vec![0; 20], 20..20, 0);
    assert_eq!(
        v.original,
        Fate::Queued {
            corrupted: false,
            reordered: false
        }
    );
    assert_eq!(link.dequeue(0).unwrap().data, vec![0; 20]);
}

#[test]
fn reorder_fraction_with_gap_1() {
    // gap defaults to 1: each packet is sent at once with probability P.
    let r = run(&mut fresh("delay 10ms reorder 25%", 6), N, MS, 10);
    let reordered = reordered_indices(&r).len();
    assert_binomial("reorder 25%", reordered, N, 0.25);
    // A reordered packet leaves as it arrives, ahead of the ones delayed before it.
    for d in r.departures.iter().filter(|d| d.due == d.arrived) {
        assert_eq!(d.arrived, packet_number(d) * MS);
    }
    assert_eq!(r.departures.iter().filter(|d| d.due == d.arrived).count(), reordered);
}

#[test]
fn reorder_gap_sends_every_gapth_packet_at_once_when_certain() {
    let r = run(&mut fresh("delay 10ms reorder 100% gap 5", 7), 1000, MS, 10);
    let reordered = reordered_indices(&r);
    // The first gap-1 packets are delayed, then every 5th goes at once.
    assert_eq!(reordered, (4..1000).step_by(5).collect::<Vec<_>>());
}

#[test]
fn reorder_gap_with_probability_follows_netem_renewal() {
    // After a reorder, 4 packets are delayed, then each goes at once w.p. 1/2:
    // cycles of 4 + Geometric(1/2) packets, mean 6, variance 2.
    let r = run(&mut fresh("delay 10ms reorder 50% gap 5", 8), N, MS, 10);
    let idx = reordered_indices(&r);
    assert!(idx.windows(2).all(|w| w[1] - w[0] >= 5), "a reorder inside the gap");
    let (mu, var) = (6.0, 2.0);
    assert_within(
        "reorders per 100k",
        idx.len() as f64,
        N as f64 / mu,
        N as f64 * var / mu.powi(3),
    );
}

#[test]
fn lost_original_with_duplicate_delivers_one_copy() {
    // duplicate and loss both certain: netem's count is 2 - 1, one copy goes on.
    let mut link = fresh("loss 100% duplicate 100%", 9);
    let v = link.enqueue(0, vec![1, 2, 3], 0..3, 7);
    assert_eq!(
        v,
        Verdict {
            original: Fate::Lost,
            duplicate: Some(Fate::Queued {
                corrupted: false,
                reordered: false
            })
        }
    );
    let d = link.dequeue(0).unwrap();
    assert_eq!((d.data, d.tag, d.duplicate), (vec![1, 2, 3], 7, true));
    assert!(link.dequeue(u64::MAX).is_none());
}

#[test]
fn duplicate_makes_its_own_loss_pass() {
    // The copy re-enters netem (duplication off) and meets the loss model again,
    // so with loss p and duplicate 100%: P(copy queued) = p·1 (original lost: copy
    // goes on) + (1-p)(1-p) (both draws pass) .
    let p = 0.3;
    let r = run(&mut fresh("loss 30% duplicate 100%", 10), N, 100_000, 10);
    let copy_queued = r
        .verdicts
        .iter()
        .filter(|v| v.duplicate.is_some_and(|f| f.is_queued()))
        .count();
    assert_binomial("copies delivered", copy_queued, N, p + (1.0 - p) * (1.0 - p));
    let both_lost = r
        .verdicts
        .iter()
        .filter(|v| v.original == Fate::Lost && v.duplicate == Some(Fate::Lost))
        .count();
    assert_eq!(both_lost, 0, "a lost original's surviving copy is not lost again");
}

#[test]
fn corruption_hits_the_original_not_the_copy_made_before_it() {
    let mut link = fresh("duplicate 100% corrupt 100%", 11);
    let v = link.enqueue(0, vec![0; 100], 0..100, 0);
    // The copy is cloned before the original is corrupted, then makes its own pass (corrupted too).
    assert_eq!(
        v.original,
        Fate::Queued {
            corrupted: true,
            reordered: false
        }
    );
    assert_eq!(
        v.duplicate,
        Some(Fate::Queued {
            corrupted: true,
            reordered: false
        })
    );
    let a = link.dequeue(0).unwrap();
    let b = link.dequeue(0).unwrap();
    assert!(
        a.duplicate && !b.duplicate,
        "the copy is queued first, as netem enqueues it at the root first"
    );
    let ones = |d: &linkemu::link::Departure| d.data.iter().map(|x| x.count_ones()).sum::<u32>();
    assert_eq!((ones(&a), ones(&b)), (1, 1));
}

#[test]
fn same_seed_same_decisions_other_seed_differs() {
    let s = "delay 10ms 5ms 25% distribution normal loss 5% 10% duplicate 2% corrupt 2% reorder 5% gap 3 rate 5mbit";
    let a = run(&mut fresh(s, 42), 20_000, 300_000, 500);
    let b = run(&mut fresh(s, 42), 20_000, 300_000, 500);
    let c = run(&mut fresh(s, 43), 20_000, 300_000, 500);
    assert_eq!(a.verdicts, b.verdicts);
    assert_eq!(a.departures, b.departures);
    assert_ne!(a.verdicts, c.verdicts);
    // The spec's own seed wins over the one given to Link::new.
    let seeded = format!("{s} seed 42");
    let d = run(&mut fresh(&seeded, 1), 20_000, 300_000, 500);
    let e = run(&mut fresh(&seeded, 2), 20_000, 300_000, 500);
    assert_eq!(d.departures, e.departures);
}

#[test]
fn set_spec_keeps_the_queue_and_applies_to_new_packets() {
    let mut link = fresh("delay 100ms", 12);
    for i in 0..10 {
        link.enqueue(i * MS, vec![i as u8; 10], 0..10, 0);
    }
    link.set_spec(spec("delay 1ms loss 100%"));
    assert_eq!(link.queue_len(), 10);
    assert_eq!(link.next_due(), Some(100 * MS));
    assert_eq!(link.enqueue(20 * MS, vec![0; 10], 0..10, 0).original, Fate::Lost);
    link.set_spec(spec("delay 1ms"));
    link.enqueue(20 * MS, vec![99; 10], 0..10, 0);
    assert_eq!(link.next_due(), Some(21 * MS));
    let order: Vec<u8> = std::iter::from_fn(|| link.dequeue(u64::MAX))
        .map(|d| d.data[0])
        .collect();
    assert_eq!(order, vec![99, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
}

#[test]
fn tag_comes_back_with_the_packet() {
    let mut link = fresh("delay 1ms", 13);
    link.enqueue(0, vec![1], 0..1, 0xdead);
    link.enqueue(0, vec![2], 0..1, 0xbeef);
    assert_eq!(link.dequeue(MS - 1), None);
    let tags: Vec<u32> = std::iter::from_fn(|| link.dequeue(MS)).map(|d| d.tag).collect();
    assert_eq!(tags, vec![0xdead, 0xbeef]);
}
