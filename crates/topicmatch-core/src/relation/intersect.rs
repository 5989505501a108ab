//! Whether two patterns share a valid topic: a search of the product automaton.
//!
//! A state is (position in `a`, position in `b`, [`Phase`]). From a state, a `Star` of either
//! side may end without reading; and one word may be read by both sides at once: a literal of
//! one side (which the other side's token must accept), or, when both tokens are wildcards,
//! the fresh word, which every wildcard accepts and which keeps the topic valid and its first
//! word free of `$` (so no other choice can reach a state the fresh word does not). The
//! patterns intersect if some reachable state has both sides accepting and a valid phase.
//!
//! At most (|a| + 1)(|b| + 1) · 3 states, each with at most three successors: O(|a| · |b|)
//! time and memory. MQTT and NATS patterns have their `Star` last, so from any state only one
//! side can be inside a `Star`: O(|a| + |b|) states are reachable.

use rustc_hash::FxHashSet;

use super::shape::{Phase, Shape, Sym, Tok};
use crate::dialect::Dialect;

/// Whether some valid topic of `dialect` is matched by both `a` and `b`.
pub(crate) fn intersects(dialect: Dialect, a: &Shape<'_>, b: &Shape<'_>) -> bool {
    let (na, nb) = (a.len(), b.len());
    let mut seen: FxHashSet<(usize, usize, Phase)> = FxHashSet::default();
    let mut stack = vec![(0, 0, Phase::Start)];
    while let Some(state) = stack.pop() {
        if !seen.insert(state) {
            continue;
        }
        let (i, j, phase) = state;
        if i == na && j == nb && phase.valid(dialect) {
            return true;
        }
        let (ta, tb) = (a.toks.get(i).copied(), b.toks.get(j).copied());
        if ta == Some(Tok::Star) {
            stack.push((i + 1, j, phase));
        }
        if tb == Some(Tok::Star) {
            stack.push((i, j + 1, phase));
        }
        let (Some(ta), Some(tb)) = (ta, tb) else {
            continue;
        };
        let word = match (ta, tb) {
            (Tok::Lit(x), Tok::Lit(y)) if x != y => continue,
            (Tok::Lit(x), _) | (_, Tok::Lit(x)) => Sym::Lit(x),
            _ => Sym::Fresh,
        };
        if phase == Phase::Start && word.dollar() && (a.hides_dollar || b.hides_dollar) {
            continue;
        }
        let next = |tok: Tok<'_>, at: usize| if tok == Tok::Star { at } else { at + 1 };
        stack.push((next(ta, i), next(tb, j), phase.after(word)));
    }
    false
}
