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
