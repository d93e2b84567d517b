//! Short fingerprints (64-bit FNV-1a, as 16 hex digits): of a film, so that
//! runs that must render the same image can be compared, and of a config's
//! text, so that a resume continues the same experiment.

/// The FNV-1a hash of `words` as 16 hex digits. Bytes widened to `u64` give
/// the byte-wise FNV-1a.
pub fn fingerprint(words: impl Iterator<Item = u64>) -> String {
    format!(
        "{:016x}",
        words.fold(0xcbf2_9ce4_8422_2325_u64, |h, w| (h ^ w).wrapping_mul(0x0100_0000_01b3))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_hash_as_byte_wise_fnv1a() {
        // The published FNV-1a 64 values of "" and "a".
        assert_eq!(fingerprint("".bytes().map(u64::from)), "cbf29ce484222325");
        assert_eq!(fingerprint("a".bytes().map(u64::from)), "af63dc4c8601ec8c");
    }
}
