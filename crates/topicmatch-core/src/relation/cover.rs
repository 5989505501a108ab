//! Whether one pattern covers another: a search for a topic the specific pattern matches and
//! the general one does not, over the specific pattern's positions and the *sets* of the
//! general pattern's positions (the subset construction, built only where the search goes).
//!
//! The specific pattern's wildcards read only the fresh word: if some topic of `specific` is
//! not matched by `general`, the same topic with every word that a wildcard of `specific`
//! took replaced by the fresh word is not matched either (`general` can only accept a fresh
//! word through its own wildcards, which accept any word in its place), and it is still a
//! valid topic of `specific`. So the search follows one word per position of `specific`.
//!
//! A state is (position in `specific`, closed set of `general`'s positions, [`Phase`]). A set
//! that contains one already seen at the same position and phase is skipped (antichain
//! pruning: whatever topic would lead the larger set to reject leads the smaller one to
//! reject too), which keeps the common shapes small:
//! - `specific` without `#`/`>`: one state per position, O(|s| · |g|).
//! - one `Star` in `specific` (every MQTT and NATS pattern): the sets a run of fresh words
//!   reaches repeat after k + 1 words (k: the one-word wildcards of `general`), so at most
//!   k + 2 sets enter the rest of `specific`: O(|s| · (k + 1) · |g|); when the `Star` is last,
//!   as in MQTT and NATS, O((|s| + k) · |g|).
//! - several `Star`s (AMQP `#` between literals): the sets can multiply with each run, in the
//!   worst case exponentially in the number of runs; the search counts its work (a state's
//!   set size, plus the comparisons pruning it) and stops with
//!   [`LimitExceeded`](crate::Error::LimitExceeded) past `max_work`.

use rustc_hash::FxHashMap;

use super::shape::{Bits, Phase, Shape, Sym, Tok};
use crate::dialect::Dialect;
use crate::error::{Error, Limit, Result};

/// Whether every valid topic of `dialect` that `specific` matches, `general` matches too.
pub(crate) fn covers(
    dialect: Dialect,
    general: &Shape<'_>,
    specific: &Shape<'_>,
    max_work: usize,
) -> Result<bool> {
    let mut search = Search {
        seen: FxHashMap::default(),
        stack: Vec::new(),
        work: 0,
        max_work,
    };
    search.push(0, general.start(), Phase::Start)?;
    let end = specific.len();
    while let Some((i, set, phase)) = search.stack.pop() {
        if i == end {
            if phase.valid(dialect) && !general.accepts(&set) {
                return Ok(false);
            }
            continue;
        }
        let tok = specific.toks[i];
        let word = match tok {
            Tok::Lit(w) => Sym::Lit(w),
            Tok::Any | Tok::Star => Sym::Fresh,
        };
        if tok == Tok::Star {
            search.push(i + 1, set.clone(), phase)?;
        }
        let first = phase == Phase::Start;
        if first && specific.hides_dollar && word.dollar() {
            continue;
        }
        let next = general.step(&set, word, first);
        let at = if tok == Tok::Star { i } else { i + 1 };
        search.push(at, next, phase.after(word))?;
    }
    Ok(true)
}

/// The states waiting, the antichains of sets seen per (position, phase), and the work done.
struct Search {
    seen: FxHashMap<(usize, Phase), Vec<Bits>>,
    stack: Vec<(usize, Bits, Phase)>,
    work: usize,
    max_work: usize,
}

impl Search {
    /// Queues the state unless a subset of its set was seen at its position and phase.
    fn push(&mut self, at: usize, set: Bits, phase: Phase) -> Result<()> {
        let seen = self.seen.entry((at, phase)).or_default();
        self.work += 1 + set.len() + seen.len() * set.words();
        if self.work > self.max_work {
            return Err(Error::limit(Limit::RelationWork, self.max_work, self.work));
        }
        if seen.iter().any(|old| old.is_subset(&set)) {
            return Ok(());
        }
        seen.retain(|old| !set.is_subset(old));
        seen.push(set.clone());
        self.stack.push((at, set, phase));
        Ok(())
    }
}
