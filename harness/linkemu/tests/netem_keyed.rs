//! Keyed draws (`enqueue_keyed`): a packet's fate follows from the seed, what it carries
//! and which copy of it this is, not from how many packets came before it. So a
//! program that resends more often because its host was busy meets the same losses on
//! every packet it sent in both runs, and the draws still have netem's statistics.

mod common;
use common::*;
use linkemu::link::{Fate, Link};
use linkemu::stats::payload_hash;

const MS: u64 = 1_000_000;

/// Data packet `seq`'s bytes, and its key as the engine makes it.
fn packet(seq: u32) -> (Vec<u8>, u64) {
    let mut data = seq.to_be_bytes().to_vec();
    data.resize(500, (seq % 251) as u8);
    let key = payload_hash(&[&0usize.to_be_bytes(), &data]);
    (data, key)
}

/// Send `seqs` in order (a seq repeated is a copy resent); the fate of each (seq, copy).
fn fates(link: &mut Link, seqs: &[u32], reverse: bool) -> Vec<((u32, usize), Fate)> {
    let mut copies = std::collections::HashMap::new();
    let mut out = vec![];
    for (i, &seq) in seqs.iter().enumerate() {
        let now = i as u64 * MS;
        let (data, key) = packet(seq);
        let copy = copies.entry(seq).or_insert(0);
        *copy += 1;
        let v = if reverse {
            link.enqueue_reverse_keyed(now, data, 4..500, 0, Some(key))
        } else {
            link.enqueue_keyed(now, data, 4..500, 0, Some(key))
        };
        out.push(((seq, *copy), v.original));
        while link.dequeue(now).is_some() {}
    }
    out.sort_by_key(|&(k, _)| k);
    out
}

#[test]
fn extra_copies_and_other_packets_in_between_do_not_move_a_packets_draws() {
    let s = "loss 30% duplicate 5% corrupt 5% delay 10ms 3ms";
    // one run sends 0..300 once; the other resends every third packet twice more at once
    // (a busy host's timer firing late) and some packets out of order
    let plain: Vec<u32> = (0..300).collect();
    let mut busy = vec![];
    for seq in 0..300u32 {
        busy.push(seq);
        if seq % 3 == 0 {
            busy.extend([seq, seq]);
        }
    }
    busy.swap(10, 40);
    let a = fates(&mut Link::new(spec(s), 11), &plain, false);
    let b = fates(&mut Link::new(spec(s), 11), &busy, false);
    let first_copies: Vec<_> = b.iter().filter(|((_, copy), _)| *copy == 1).cloned().collect();
    assert_eq!(a, first_copies);
    // the copies of one packet draw afresh: some of them are lost where their first was not
    let lost = |seq: u32, copy: usize| b.iter().any(|&(k, f)| k == (seq, copy) && f == Fate::Lost);
    assert!((0..300).step_by(3).any(|seq| !lost(seq, 1) && lost(seq, 2)));
    // another seed draws otherwise
    assert_ne!(a, fates(&mut Link::new(spec(s), 12), &plain, false));
}

#[test]
fn the_two_directions_of_a_shared_queue_draw_apart() {
    let s = "loss 30% delay 5ms";
    let seqs: Vec<u32> = (0..300).collect();
    let forward = fates(&mut Link::shared(spec(s), 3, 4), &seqs, false);
    let reverse = fates(&mut Link::shared(spec(s), 3, 4), &seqs, true);
    assert_ne!(forward, reverse);
    // each as a queue of its own with that seed
    assert_eq!(forward, fates(&mut Link::new(spec(s), 3), &seqs, false));
    assert_eq!(reverse, fates(&mut Link::new(spec(s), 4), &seqs, false));
}

#[test]
fn keyed_loss_keeps_its_rate_on_distinct_packets_and_on_copies_of_one() {
    let s = "loss 28%";
    let mut link = Link::new(spec(s), 2026);
    let n = 40_000;
    let distinct = (0..n as u32)
        .filter(|&seq| {
            let (data, key) = packet(seq);
            link.enqueue_keyed(0, data, 0..0, 0, Some(key)).original == Fate::Lost
        })
        .count();
    assert_binomial(s, distinct, n, 0.28);
    let (data, key) = packet(7);
    let copies = (0..n)
        .filter(|_| link.enqueue_keyed(0, data.clone(), 0..0, 0, Some(key)).original == Fate::Lost)
        .count();
    assert_binomial(s, copies, n, 0.28);
    while link.dequeue(u64::MAX).is_some() {}
}

#[test]
fn a_keyed_packets_corruption_and_delay_are_its_own_too() {
    let s = "corrupt 50% delay 20ms 10ms";
    let run = |extra: bool| {
        let mut link = Link::new(spec(s), 5);
        let mut out = vec![];
        for seq in 0..200u32 {
            if extra && seq % 4 == 0 {
                let (junk, key) = packet(10_000 + seq);
                link.enqueue_keyed(seq as u64 * MS, junk, 4..500, 1, Some(key));
            }
            let (data, key) = packet(seq);
            link.enqueue_keyed(seq as u64 * MS, data, 4..500, 0, Some(key));
        }
        while let Some(d) = link.dequeue(u64::MAX) {
            if d.tag == 0 {
                out.push((d.data, d.due - d.arrived, d.corrupted));
            }
        }
        out.sort();
        out
    };
    let (a, b) = (run(false), run(true));
    assert_eq!(a.len(), 200);
    assert_eq!(a, b);
    assert!(a.iter().any(|p| p.2) && a.iter().any(|p| !p.2));
}
