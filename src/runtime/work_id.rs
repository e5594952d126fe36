//! The name of a unit of work as replies, tests' mock keys and the
//! inspector spell it: a step (`review`), one item of a foreach step
//! (`review[2]`), or a step of a sub-workflow's run reached through a
//! `uses:` step (`review_each[1]/read`, at any depth). One parser and one
//! printer: nothing else splits these strings by hand. [`WorkRef`] is the
//! same unit by index, in one run (what the machine's sets hold).

use std::fmt;
use std::str::FromStr;

/// A step, an item of a foreach step, and the step inside the child run
/// that names, if any: `step`, `step[i]`, `step[i]/child…`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkId {
    /// The step's id in its workflow.
    pub step: String,
    /// The foreach item's index, when an item is named.
    pub item: Option<usize>,
    /// The work inside the child run of a `uses:` step (after the `/`).
    pub child: Option<Box<WorkId>>,
}

/// A unit of work of a run, by index: a step, or one item of a foreach
/// step (its name in replies is a [`WorkId`]: `Machine::work_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WorkRef {
    /// The step's index in the workflow.
    pub step: usize,
    /// The item's index, for one item of a foreach step.
    pub item: Option<usize>,
}

impl WorkRef {
    /// Step `step` (or, with `item`, one of its items).
    pub fn new(step: usize, item: Option<usize>) -> WorkRef {
        WorkRef { step, item }
    }
}

/// Why a string is not a [`WorkId`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkIdError {
    /// A segment with no step id (``, `a//b`, `a/`, `[1]`).
    EmptyStep,
    /// A `[` or `]` that is not one `[N]` closing the segment (`a[`, `a]`,
    /// `a[1]b`, `a[1][2]`).
    Brackets,
    /// An item that is not a decimal index (`a[x]`, `a[]`, `a[-1]`).
    BadIndex,
}

impl fmt::Display for WorkIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            WorkIdError::EmptyStep => "a step path segment has no step id",
            WorkIdError::Brackets => "brackets must be one `[N]` at the end of a step id",
            WorkIdError::BadIndex => "an item index must be a number: `id[N]`",
        })
    }
}

impl std::error::Error for WorkIdError {}

impl WorkId {
    /// A whole step, no item, no child.
    pub fn step(step: impl Into<String>) -> WorkId {
        WorkId { step: step.into(), item: None, child: None }
    }

    /// Parses one segment (no `/`): `step` or `step[N]`.
    pub fn parse_segment(s: &str) -> Result<(&str, Option<usize>), WorkIdError> {
        let (step, item) = match s.find('[') {
            None if s.contains(']') => return Err(WorkIdError::Brackets),
            None => (s, None),
            Some(open) => {
                let inner = s[open + 1..].strip_suffix(']').ok_or(WorkIdError::Brackets)?;
                if inner.contains(['[', ']']) {
                    return Err(WorkIdError::Brackets);
                }
                if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(WorkIdError::BadIndex);
                }
                (&s[..open], Some(inner.parse::<usize>().map_err(|_| WorkIdError::BadIndex)?))
            }
        };
        if step.is_empty() {
            return Err(WorkIdError::EmptyStep);
        }
        Ok((step, item))
    }

    /// The step id of `id` or `id[i]…` (the text before the first `[`),
    /// without parsing the rest: what a did-you-mean compares against step
    /// ids, and what a malformed id is reported under.
    pub fn base(s: &str) -> &str {
        s.split_once('[').map_or(s, |(b, _)| b)
    }

    /// This work without its child: `step` or `step[i]`.
    pub fn head(&self) -> WorkId {
        WorkId { step: self.step.clone(), item: self.item, child: None }
    }

    /// The same path without the last segment's item, and that item's
    /// index, when the last segment names one (`a/b[2]` → `a/b`, 2): where
    /// a foreach step's inputs are kept for all its items.
    pub fn without_leaf_item(&self) -> Option<(WorkId, usize)> {
        match &self.child {
            Some(c) => {
                let (child, n) = c.without_leaf_item()?;
                Some((WorkId { step: self.step.clone(), item: self.item, child: Some(Box::new(child)) }, n))
            }
            None => Some((WorkId::step(self.step.clone()), self.item?)),
        }
    }

    /// The same path with every item index dropped (`a[1]/b[2]` → `a/b`):
    /// the key a mock for every item of a step is written under.
    pub fn without_items(&self) -> WorkId {
        WorkId {
            step: self.step.clone(),
            item: None,
            child: self.child.as_ref().map(|c| Box::new(c.without_items())),
        }
    }
}

impl FromStr for WorkId {
    type Err = WorkIdError;

    fn from_str(s: &str) -> Result<WorkId, WorkIdError> {
        let (head, rest) = match s.split_once('/') {
            Some((head, rest)) => (head, Some(rest)),
            None => (s, None),
        };
        let (step, item) = WorkId::parse_segment(head)?;
        let child = rest.map(|r| r.parse::<WorkId>().map(Box::new)).transpose()?;
        Ok(WorkId { step: step.to_owned(), item, child })
    }
}

impl fmt::Display for WorkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.step)?;
        if let Some(i) = self.item {
            // Not `write!`: a reply lists up to 50 of these (`ready`).
            f.write_str("[")?;
            f.write_str(itoa::Buffer::new().format(i))?;
            f.write_str("]")?;
        }
        if let Some(c) = &self.child {
            f.write_str("/")?;
            fmt::Display::fmt(c, f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_three_forms_parse_to_their_parts() {
        assert_eq!("review".parse(), Ok(WorkId::step("review")));
        let item: WorkId = "review[2]".parse().unwrap();
        assert_eq!((item.step.as_str(), item.item, item.child.is_none()), ("review", Some(2), true));
        let deep: WorkId = "each[1]/read/inner[0]".parse().unwrap();
        assert_eq!((deep.step.as_str(), deep.item), ("each", Some(1)));
        let read = deep.child.as_deref().unwrap();
        assert_eq!((read.step.as_str(), read.item), ("read", None));
        let inner = read.child.as_deref().unwrap();
        assert_eq!((inner.step.as_str(), inner.item, inner.child.is_none()), ("inner", Some(0), true));
        assert_eq!(deep.to_string(), "each[1]/read/inner[0]");
        assert_eq!(deep.without_items().to_string(), "each/read/inner");
        assert_eq!(deep.head().to_string(), "each[1]");
        let (base, n) = deep.without_leaf_item().unwrap();
        assert_eq!((base.to_string(), n), ("each[1]/read/inner".to_owned(), 0));
        assert_eq!("a[1]/b".parse::<WorkId>().unwrap().without_leaf_item(), None);
    }

    #[test]
    fn bad_forms_are_errors_with_their_reason() {
        for (bad, why) in [
            ("a[", WorkIdError::Brackets),
            ("a]", WorkIdError::Brackets),
            ("a[1]b", WorkIdError::Brackets),
            ("a[1][2]", WorkIdError::Brackets),
            ("a[x]", WorkIdError::BadIndex),
            ("a[]", WorkIdError::BadIndex),
            ("a[-1]", WorkIdError::BadIndex),
            ("a[+1]", WorkIdError::BadIndex),
            ("a[99999999999999999999999]", WorkIdError::BadIndex),
            ("", WorkIdError::EmptyStep),
            ("[1]", WorkIdError::EmptyStep),
            ("a/", WorkIdError::EmptyStep),
            ("a//b", WorkIdError::EmptyStep),
            ("a/b[", WorkIdError::Brackets),
        ] {
            assert_eq!(bad.parse::<WorkId>(), Err(why), "{bad:?}");
        }
        assert_eq!(WorkId::base("each[1]/read"), "each");
        assert_eq!(WorkId::base("a[x"), "a");
    }

    fn segment() -> impl Strategy<Value = (String, Option<usize>)> {
        ("[a-z_][a-z0-9_-]{0,8}", proptest::option::of(0usize..100_000))
    }

    fn work_id() -> impl Strategy<Value = WorkId> {
        prop::collection::vec(segment(), 1..4).prop_map(|segs| {
            segs.into_iter()
                .rev()
                .fold(None, |child, (step, item)| Some(WorkId { step, item, child: child.map(Box::new) }))
                .expect("at least one segment")
        })
    }

    proptest! {
        #[test]
        fn display_then_parse_round_trips(id in work_id()) {
            let text = id.to_string();
            prop_assert_eq!(text.parse::<WorkId>(), Ok(id));
        }

        #[test]
        fn any_text_parses_or_errs_and_a_parse_prints_back(s in "[a-z\\[\\]/0-9x]{0,12}") {
            // Never a panic; what parses prints to a string that parses the same.
            if let Ok(id) = s.parse::<WorkId>() {
                prop_assert_eq!(id.to_string().parse::<WorkId>(), Ok(id));
            }
        }
    }
}
