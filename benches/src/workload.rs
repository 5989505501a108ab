//! A workload: subscriptions plus a stream of topics, and how to load it into a matcher.

use topicmatch_core::{Algorithm, Config, Dialect, Engine, Limits, Matcher, Pattern, Subscriber};

/// A set of subscriptions and a stream of topics to look up.
pub struct Workload {
    /// The workload's name, as benchmark ids print it.
    pub name: String,
    /// The dialect of every pattern and topic.
    pub dialect: Dialect,
    /// (pattern, subscriber) pairs.
    pub subscriptions: Vec<(String, i64)>,
    /// Topics, in lookup order.
    pub topics: Vec<String>,
}

impl Workload {
    /// An engine of `algorithm` holding every subscription.
    pub fn engine(&self, algorithm: Algorithm) -> Engine {
        let engine = Engine::new(self.dialect, algorithm, Limits::for_dialect(self.dialect))
            .expect("valid limits");
        for (pattern, subscriber) in &self.subscriptions {
            engine
                .subscribe(pattern, &Subscriber::Int(*subscriber))
                .expect("workload patterns are valid");
        }
        engine
    }

    /// Every subscription's pattern, parsed (to load a bare matcher without the engine).
    pub fn parsed(&self) -> Vec<Pattern> {
        let limits = Limits::for_dialect(self.dialect);
        self.subscriptions
            .iter()
            .map(|(p, _)| Pattern::parse(self.dialect, &limits, p).expect("valid pattern"))
            .collect()
    }

    /// A bare matcher of `algorithm` (no engine bookkeeping) holding `patterns`, subscriber
    /// `i` for pattern `i`.
    pub fn matcher(&self, algorithm: Algorithm, patterns: &[Pattern]) -> Box<dyn Matcher> {
        let matcher = algorithm.build(Config::new(self.dialect));
        for (pattern, id) in patterns.iter().zip(0..) {
            matcher.insert(pattern, id);
        }
        matcher
    }

    /// How many subscriptions contain a wildcard.
    pub fn wildcard_count(&self) -> usize {
        let one = self.dialect.one_wildcard();
        let multi = self.dialect.multi_wildcard();
        let sep = char::from(self.dialect.separator());
        self.subscriptions
            .iter()
            .filter(|(p, _)| p.split(sep).any(|w| w == one || w == multi))
            .count()
    }
}
