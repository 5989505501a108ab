//! A workload: subscriptions plus a stream of topics, and how to load it into a matcher.

use topicmatch_core::{Algorithm, Config, Dialect, Engine, Limits, Matcher, Pattern, Subscriber};

/// The result cache of the `cstrie_cached` rows: as many topics as `inverted_bitmap` caches
/// rows by default.
pub const CACHED_CSTRIE_CAPACITY: usize = 16_384;

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
        self.engine_with(algorithm, Config::new(self.dialect))
    }

    /// An engine of `algorithm` built with `config` (its dialect must be the workload's),
    /// holding every subscription.
    pub fn engine_with(&self, algorithm: Algorithm, config: Config) -> Engine {
        assert_eq!(config.dialect, self.dialect, "the workload's dialect");
        let engine = Engine::with_config(algorithm, config).expect("valid config");
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

    /// An engine of `cstrie` with a result cache of [`CACHED_CSTRIE_CAPACITY`] topics, holding
    /// every subscription: the `cstrie_cached` rows.
    pub fn cached_cstrie(&self) -> Engine {
        let config = Config {
            cache_capacity: Some(CACHED_CSTRIE_CAPACITY),
            ..Config::new(self.dialect)
        };
        self.engine_with(Algorithm::Cstrie, config)
    }

    /// An engine of the algorithm named `name` (as `Algorithm::name` gives it), or
    /// `cstrie_cached` for [`Workload::cached_cstrie`]; panics on an unknown name.
    pub fn engine_named(&self, name: &str) -> Engine {
        if name == "cstrie_cached" {
            return self.cached_cstrie();
        }
        let algorithm = *Algorithm::ALL
            .iter()
            .find(|a| a.name() == name)
            .unwrap_or_else(|| panic!("unknown algorithm {name:?}"));
        self.engine(algorithm)
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
