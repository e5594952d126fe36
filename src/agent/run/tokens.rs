//! Token estimates, shared by the prompt builder and the memory (below
//! both, so neither imports the other for it).

/// The estimated token count of `text`: `ceil(chars / 4)`, the common rule
/// of thumb for BPE tokenizers.
pub fn estimate_tokens(text: &str) -> usize {
    text.chars().count().div_ceil(4)
}
