//! Pseudo-random words for the unit tests' generated cases: xorshift64,
//! so that every run sees the same cases.

/// The next words after `seed` (not zero), one per call.
pub fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// The powers of two and of ten below 2^(64 * `words`), each less one,
/// itself and plus one (kept within the words), as `words` words, least
/// significant first: the edges of every digit and word count.
pub fn near_powers(words: usize) -> Vec<Vec<u64>> {
    let mut powers: Vec<Vec<u64>> = (0..64 * words)
        .map(|bit| {
            let mut n = vec![0; words];
            n[bit / 64] = 1 << (bit % 64);
            n
        })
        .collect();
    let mut ten = vec![0; words];
    ten[0] = 1;
    loop {
        powers.push(ten.clone());
        let mut carry = 0u128;
        for w in ten.iter_mut() {
            let p = u128::from(*w) * 10 + carry;
            (*w, carry) = (p as u64, p >> 64);
        }
        if carry != 0 {
            break;
        }
    }
    let mut cases = Vec::new();
    for n in powers {
        for delta in [-1i64, 0, 1] {
            let mut m = n.clone();
            let mut carry = delta;
            for w in m.iter_mut() {
                let (v, over) = w.overflowing_add_signed(carry);
                *w = v;
                carry = if over { delta } else { 0 };
            }
            cases.push(m);
        }
    }
    cases
}
