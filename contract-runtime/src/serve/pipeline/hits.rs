//! Admitting a checked result to the cache, and serving a cache hit: only under the
//! contract identity it was validated under, revalidated when the limits ask for it.

use std::sync::{Arc, OnceLock};

use bytes::Bytes;
use serde_json::Value;

use super::refusal::check;
use super::{emit, CallContext, Pipeline};
use crate::contract::OutputContract;
use crate::serve::cache::{CacheKey, CachedResult, PreparedResult};
use crate::serve::wire::{root_shape, CacheStatus, ResultMeta, RootShape, Text, ToolCallResult};

impl Pipeline {
    /// Admits a checked result (its tree, when one was built, and its text) to the cache
    /// and builds the success.
    pub(super) fn admit(
        &self,
        ctx: &CallContext,
        contract: &OutputContract,
        value: Option<Value>,
        text: String,
    ) -> ToolCallResult {
        if let Some(limit) = self.over_size(contract, &text) {
            return limit;
        }
        if let (Some(cache), true) = (&self.cache, ctx.cacheable) {
            cache.put(
                CacheKey::new(ctx.tool(), contract.id(), ctx.arguments()),
                CachedResult { contract: contract.id().clone(), text: Arc::from(text.as_str()) },
            );
        }
        emit(
            ctx,
            contract,
            value,
            text,
            if self.cache.is_some() && ctx.cacheable { CacheStatus::Miss } else { CacheStatus::Bypass },
        )
    }

    /// A usable cache hit for the call, or `None`: what [`Pipeline::call`] serves
    /// instead of running the handler. Entries written under another contract identity,
    /// and entries that fail revalidation, are evicted. Adapters that run handlers
    /// themselves call it first.
    pub fn cached(&self, ctx: &CallContext, contract: &OutputContract) -> Option<ToolCallResult> {
        let hit = self.lookup(ctx, contract)?;
        Some(self.served(ctx, Some(contract), hit))
    }

    /// `find`, counted as a cache hit or miss when the cache was asked.
    pub(super) fn lookup(&self, ctx: &CallContext, contract: &OutputContract) -> Option<ToolCallResult> {
        self.cache.as_ref().filter(|_| ctx.cacheable)?;
        let found = self.find(ctx, contract);
        if found.is_some() {
            self.counters.cache_hit();
        } else {
            self.counters.cache_miss();
        }
        found
    }

    pub(super) fn find(&self, ctx: &CallContext, contract: &OutputContract) -> Option<ToolCallResult> {
        let cache = self.cache.as_ref().filter(|_| ctx.cacheable)?;
        let key = CacheKey::new(ctx.tool(), contract.id(), ctx.arguments());
        let (entry, prepared) = cache.get_prepared(&key)?;
        if entry.contract != *contract.id() {
            cache.evict(&key);
            return None;
        }
        // The tree is built only when something here reads it: a tighter depth limit or
        // revalidation. Otherwise the text is only checked to be JSON (without building
        // anything), and `structuredContent` is parsed from it if someone asks.
        let needs_tree =
            cache.revalidate_hits() || self.limits.max_depth() < crate::contract::limits::DEFAULT_MAX_DEPTH;
        if entry.text.len() > self.limits.max_bytes() {
            // Too big for this pipeline, but valid: another pipeline may serve it.
            return None;
        }
        let wrapped = root_shape(contract, ctx.protocol()) == RootShape::Wrapped;
        if !needs_tree {
            // Bytes this cache wrote from this very text at an earlier hit of this era:
            // served as they are, shared, with nothing parsed, copied or escaped.
            if let Some(body) = prepared.as_ref().filter(|p| p.is_for(&entry.text)).and_then(|p| p.form(wrapped)) {
                return Some(prepared_hit(contract, entry.text, wrapped, body.clone()));
            }
        }
        let value = if needs_tree {
            let Ok(value) = serde_json::from_str::<Value>(&entry.text) else {
                cache.evict(&key);
                return None;
            };
            Some(value)
        } else {
            if serde_json::from_str::<serde::de::IgnoredAny>(&entry.text).is_err() {
                cache.evict(&key);
                return None;
            }
            None
        };
        // An entry admitted under other limits must fit these too. serde_json parses at
        // most 128 levels, so only a tighter depth limit needs the walk.
        let fits = value.as_ref().is_none_or(|value| {
            self.limits.max_depth() >= crate::contract::limits::DEFAULT_MAX_DEPTH
                || crate::contract::limits::measure_value(value, &self.limits).is_ok()
        });
        if !fits {
            return None;
        }
        if cache.revalidate_hits() && value.as_ref().is_some_and(|value| check(contract, value).is_err()) {
            cache.evict(&key);
            return None;
        }
        if value.is_none() && cache.keeps_prepared() {
            // The first hit of this era: the text is JSON (checked just above) and was
            // validated when admitted, so its wire bytes are written once, kept beside
            // it, and shared by every later hit.
            let mut prepared = prepared
                .filter(|p| p.is_for(&entry.text))
                .unwrap_or_else(|| PreparedResult::new(Arc::clone(&entry.text)));
            let body = prepared.write_form(wrapped);
            cache.keep_prepared(&key, prepared);
            return Some(prepared_hit(contract, entry.text, wrapped, body));
        }
        Some(emit(ctx, contract, value, entry.text.to_string(), CacheStatus::Hit))
    }
}

/// A hit served from the wire bytes written for its entry's text.
fn prepared_hit(contract: &OutputContract, text: Arc<str>, wrapped: bool, body: Bytes) -> ToolCallResult {
    let text = if wrapped { Text::Wrapped(text, OnceLock::new()) } else { Text::Shared(text) };
    ToolCallResult::success_prepared(text, body, ResultMeta::cached(contract, CacheStatus::Hit), CacheStatus::Hit)
}
