//! Filtering mode ("High-speed message matching"): does anything match? A second set of level
//! rows over the wildcard patterns, rebuilt lazily after a change, where the most general
//! patterns take the leftmost slots and a pattern already covered by one placed before it
//! (`forex.*` covers `forex.eur`) is left out; evaluation runs left to right and stops at the
//! first matching column.

use crate::dialect::Dialect;
use crate::matchers::shared::level_index::levels::Levels;
use crate::matchers::shared::level_index::shape::Shape;
use crate::matchers::shared::level_index::Index;
use crate::pattern::{Pattern, Word};

/// The filtering rows, valid for one generation of the index.
#[derive(Debug)]
pub(crate) struct Filter {
    pub(crate) generation: u64,
    levels: Levels,
    kept: usize,
}

/// Most general first: fewest literal words, then multi-word before exact, then shortest.
fn generality(pattern: &Pattern, shape: Shape) -> (usize, bool, usize) {
    let literals = pattern.words().iter().filter(|w| !w.is_wildcard()).count();
    (
        literals,
        !matches!(shape, Shape::Prefix { .. }),
        pattern.words().len(),
    )
}

impl Filter {
    /// The filter of `index`'s current wildcard patterns.
    pub(crate) fn build(index: &Index) -> Filter {
        let dialect = index.config().dialect;
        let mut patterns: Vec<(&Pattern, Shape)> = index
            .slots
            .iter()
            .map(|(_, s)| (&s.pattern, Shape::of(&s.pattern)))
            .filter(|(_, shape)| *shape != Shape::Complex)
            .collect();
        patterns.sort_by_key(|(p, shape)| generality(p, *shape));
        let mut levels = Levels::new(dialect);
        let mut kept = 0u32;
        for (pattern, shape) in patterns {
            let dollar = dialect == Dialect::Mqtt
                && matches!(pattern.words().first(), Some(Word::Literal(w)) if w.starts_with('$'));
            if levels.covers(pattern.words(), shape, dollar) {
                continue;
            }
            levels.insert(kept, pattern.words(), shape);
            kept += 1;
        }
        Filter {
            generation: index.generation,
            levels,
            kept: kept as usize,
        }
    }

    /// Whether a kept pattern matches the validated topic `words`.
    pub(crate) fn any(&self, words: &[&str], dollar: bool) -> bool {
        self.levels.any(words, dollar)
    }

    /// How many patterns the filter consults.
    pub(crate) fn kept(&self) -> usize {
        self.kept
    }
}
