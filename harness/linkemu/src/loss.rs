//! netem's loss models: random loss with correlation, the 4-state Markov model
//! (`loss state`, netem's `loss_4state`) and Gilbert-Elliott (`loss gemodel`,
//! netem's `loss_gilb_ell`). Each answers, per packet, "is this one lost?".

use crate::rng::{Correlated, Rng};
use crate::spec::LossModel;

/// States of netem's 4-state model (the GI model of Salsano et al.).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FourState {
    /// 1: packets delivered within a gap period
    TxInGap = 1,
    /// 2: packets delivered within a burst period
    TxInBurst = 2,
    /// 3: packets lost within a burst period
    LostInBurst = 3,
    /// 4: isolated losses within a gap period
    LostInGap = 4,
}

/// States of the Gilbert-Elliott model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GeState {
    Good,
    Bad,
}

/// A loss generator; the probabilities are in netem's fixed point (`u32::MAX` = 100%).
#[derive(Clone, Debug)]
pub enum Loss {
    None,
    Random {
        p: u32,
        corr: Correlated,
    },
    /// a1 = p13, a2 = p31, a3 = p32, a4 = p14, a5 = p23 (netem's field names).
    FourState {
        p13: u32,
        p31: u32,
        p32: u32,
        p14: u32,
        p23: u32,
        state: FourState,
    },
    /// p: good→bad, r: bad→good, h: kernel's `h` (loss in bad = 1-h), k1: loss in good (1-k).
    GilbertElliott {
        p: u32,
        r: u32,
        h: u32,
        k1: u32,
        state: GeState,
    },
}

impl Loss {
    /// A fresh generator (start state 1 / good, as netem's `get_loss_clg`).
    pub fn new(model: &LossModel, rng: &mut Rng) -> Loss {
        match *model {
            LossModel::None => Loss::None,
            LossModel::Random(c) => Loss::Random {
                p: c.p.scaled(),
                corr: Correlated::new(c.corr.scaled(), rng),
            },
            LossModel::State {
                p13,
                p31,
                p32,
                p23,
                p14,
            } => Loss::FourState {
                p13: p13.scaled(),
                p31: p31.scaled(),
                p32: p32.scaled(),
                p14: p14.scaled(),
                p23: p23.scaled(),
                state: FourState::TxInGap,
            },
            LossModel::GilbertElliott {
                p,
                r,
                one_minus_h,
                one_minus_k,
            } => Loss::GilbertElliott {
                p: p.scaled(),
                r: r.scaled(),
                // tc sends h = 100% - (1-h); the kernel loses in bad when rnd > h.
                h: u32::MAX - one_minus_h.scaled(),
                k1: one_minus_k.scaled(),
                state: GeState::Good,
            },
        }
    }

    /// Decide the fate of the next packet: true = lost.
    pub fn lose(&mut self, rng: &mut Rng) -> bool {
        match self {
            Loss::None => false,
            Loss::Random { p, corr } => *p != 0 && *p >= corr.next(rng),
            Loss::FourState {
                p13,
                p31,
                p32,
                p14,
                p23,
                state,
            } => four_state(rng.next_u32(), *p13, *p31, *p32, *p14, *p23, state),
            Loss::GilbertElliott { p, r, h, k1, state } => match state {
                // The packet's fate follows the state it arrived in; the transition is for the next.
                GeState::Good => {
                    if rng.next_u32() < *p {
                        *state = GeState::Bad;
                    }
                    rng.next_u32() < *k1
                }
                GeState::Bad => {
                    if rng.next_u32() < *r {
                        *state = GeState::Good;
                    }
                    rng.next_u32() > *h
                }
            },
        }
    }
}

/// netem's `loss_4state`, comparisons and all: one draw picks the next state, and
/// the packet is lost when that state is a loss state. Ties (rnd equal to a
/// threshold) fall through unchanged, as in netem.
fn four_state(rnd: u32, p13: u32, p31: u32, p32: u32, p14: u32, p23: u32, state: &mut FourState) -> bool {
    let rnd = rnd as u64;
    let (p13, p31, p32, p14, p23) = (p13 as u64, p31 as u64, p32 as u64, p14 as u64, p23 as u64);
    match *state {
        FourState::TxInGap => {
            if rnd < p14 {
                *state = FourState::LostInGap;
                return true;
            } else if p14 < rnd && rnd < p13 + p14 {
                *state = FourState::LostInBurst;
                return true;
            }
            // else stay in TxInGap
        }
        FourState::TxInBurst => {
            if rnd < p23 {
                *state = FourState::LostInBurst;
                return true;
            }
        }
        FourState::LostInBurst => {
            if rnd < p32 {
                *state = FourState::TxInBurst;
            } else if p32 < rnd && rnd < p31 + p32 {
                *state = FourState::TxInGap;
            } else if p31 + p32 < rnd {
                return true; // stay: another loss in the burst
            }
        }
        FourState::LostInGap => *state = FourState::TxInGap,
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn four_state_transitions_follow_netem() {
        let (p13, p31, p32, p14, p23) = (100, 200, 300, 10, 50);
        let mut s = FourState::TxInGap;
        assert!(four_state(5, p13, p31, p32, p14, p23, &mut s));
        assert_eq!(s, FourState::LostInGap);
        assert!(!four_state(0, p13, p31, p32, p14, p23, &mut s));
        assert_eq!(s, FourState::TxInGap);
        assert!(four_state(50, p13, p31, p32, p14, p23, &mut s));
        assert_eq!(s, FourState::LostInBurst);
        assert!(four_state(u32::MAX, p13, p31, p32, p14, p23, &mut s));
        assert_eq!(s, FourState::LostInBurst);
        assert!(!four_state(299, p13, p31, p32, p14, p23, &mut s));
        assert_eq!(s, FourState::TxInBurst);
        assert!(!four_state(60, p13, p31, p32, p14, p23, &mut s));
        assert!(four_state(49, p13, p31, p32, p14, p23, &mut s));
        assert!(!four_state(400, p13, p31, p32, p14, p23, &mut s));
        assert_eq!(s, FourState::TxInGap);
        assert!(!four_state(1000, p13, p31, p32, p14, p23, &mut s));
        assert_eq!(s, FourState::TxInGap);
    }
}
