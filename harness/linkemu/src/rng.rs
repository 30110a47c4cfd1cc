//! The link's random source: xoshiro256** seeded through splitmix64, and netem's
//! correlated random numbers (`get_crandom`), both in netem's 32-bit space.

/// A small, fast, seeded PRNG (xoshiro256**). One per link, so a seed and an
/// arrival order fix every decision the link makes.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // splitmix64 spreads any seed (even 0) over the whole state.
        let mut z = seed;
        let mut next = || {
            z = z.wrapping_add(GOLDEN);
            splitmix64(z)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// netem draws 32-bit numbers (`prandom_u32_state`); the high half is the best half here.
    pub fn next_u32(&mut self) -> u32 {
        (self.next_u64() >> 32) as u32
    }

    /// Uniform in `0..n` (n > 0), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

const GOLDEN: u64 = 0x9e37_79b9_7f4a_7c15;

/// splitmix64's finaliser: a bijection of u64 whose every output bit depends on every input bit.
fn splitmix64(mut x: u64) -> u64 {
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// A seed made of several values, each mixed in turn: for a generator of one packet's
/// own draws from (the link's seed, the packet's key, its occurrence).
pub fn mix(parts: &[u64]) -> u64 {
    parts
        .iter()
        .fold(GOLDEN, |h, &p| splitmix64(h.wrapping_add(GOLDEN) ^ p))
}

/// netem's correlated random number generator (`struct crndstate`):
/// next = ((2^32 - ρ') · U + ρ' · last) >> 32, with ρ' = rho + 1, so the result is
/// a weighted mean of a fresh uniform and the previous result.
#[derive(Clone, Copy, Debug, Default)]
pub struct Correlated {
    rho: u32,
    last: u32,
}

impl Correlated {
    /// `init_crandom`: the first `last` is random (netem uses the unseeded RNG; we
    /// use the link's, so runs stay reproducible).
    pub fn new(rho: u32, rng: &mut Rng) -> Correlated {
        Correlated {
            rho,
            last: rng.next_u32(),
        }
    }

    pub fn next(&mut self, rng: &mut Rng) -> u32 {
        let value = rng.next_u32() as u64;
        if self.rho == 0 {
            return value as u32;
        }
        let rho = self.rho as u64 + 1;
        let answer = ((value * ((1u64 << 32) - rho) + self.last as u64 * rho) >> 32) as u32;
        self.last = answer;
        answer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_seeds_differ() {
        let (mut a, mut b, mut c) = (Rng::new(7), Rng::new(7), Rng::new(8));
        let xa: Vec<u64> = (0..100).map(|_| a.next_u64()).collect();
        let xb: Vec<u64> = (0..100).map(|_| b.next_u64()).collect();
        let xc: Vec<u64> = (0..100).map(|_| c.next_u64()).collect();
        assert_eq!(xa, xb);
        assert_ne!(xa, xc);
    }

    #[test]
    fn mixed_seeds_differ_in_each_part_and_in_order() {
        let seeds = [
            mix(&[1, 2, 3]),
            mix(&[1, 2, 4]),
            mix(&[1, 3, 3]),
            mix(&[2, 2, 3]),
            mix(&[3, 2, 1]),
        ];
        for (i, a) in seeds.iter().enumerate() {
            assert!(seeds[i + 1..].iter().all(|b| a != b), "{seeds:?}");
        }
        assert_eq!(mix(&[1, 2, 3]), mix(&[1, 2, 3]));
    }

    #[test]
    fn below_stays_in_range_and_covers_it() {
        let mut r = Rng::new(1);
        let mut seen = [false; 10];
        for _ in 0..1000 {
            let v = r.below(10) as usize;
            seen[v] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn full_correlation_repeats_the_last_value() {
        let mut r = Rng::new(3);
        let mut c = Correlated::new(u32::MAX, &mut r);
        let first = c.next(&mut r);
        assert!((0..100).all(|_| c.next(&mut r) == first));
    }

    #[test]
    fn correlation_makes_successive_values_close() {
        // With rho = 90%, |x_k - x_{k-1}| averages far less than for independent uniforms (1/3).
        let mut r = Rng::new(4);
        let mut c = Correlated::new((0.9 * u32::MAX as f64) as u32, &mut r);
        let mut prev = c.next(&mut r) as f64;
        let mut sum = 0.0;
        for _ in 0..10_000 {
            let x = c.next(&mut r) as f64;
            sum += (x - prev).abs() / u32::MAX as f64;
            prev = x;
        }
        assert!(sum / 10_000.0 < 0.1, "mean step {}", sum / 10_000.0);
    }
}
