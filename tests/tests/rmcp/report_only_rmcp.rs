//! Report-only rollout through the rmcp adapter, in process: the same broken result
//! refused when enforced and sent unchanged (marked `"enforced": false`) when
//! report-only, on every path a result leaves by — complete, a task's result for a
//! 2026-07-28 client that declared the tasks extension, and the cache (a report-only
//! violation is never admitted: the next call runs the handler again, while a clean
//! result is served from the cache, as a task to a client that takes them).
//! Server-wide and per tool; each case has its enforced twin and a clean control.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use contract_runtime::cache::InMemoryCache;
use contract_runtime::observe::Enforcement;
use contract_runtime::pipeline::Pipeline;
use contract_runtime::rmcp::ContractedServer;
use contract_runtime::wire::{ErrorCode, CACHE_META_KEY, ENFORCED_FIELD, META_KEY};
use serde_json::{json, Value};

use crate::support::rmcp_paths;
use crate::support::rollout_probe;

use rmcp_paths::{assert_no_markers, error_body};
use rollout_probe::{contracted, probe, runtime, RolloutProbe, Wire, TASK_TOOL};

fn broken() -> Value {
    json!({ "ratio": 1.5, "token": "tok-1" })
}

fn clean() -> Value {
    json!({ "ratio": 0.5, "token": "tok-1" })
}

/// `_meta[META_KEY].enforced` of a result, if present.
fn enforced_field(result: &Value) -> Option<&Value> {
    result["_meta"][META_KEY].get(ENFORCED_FIELD)
}

fn assert_refused(result: &Value) {
    assert_eq!(error_body(result)["code"], ErrorCode::OutputContractViolation.as_str(), "{result}");
    assert_eq!(enforced_field(result), None, "{result}");
    assert_no_markers(result);
}

fn assert_sent_unenforced(result: &Value, arguments: &Value) {
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(&result["structuredContent"], arguments, "sent unchanged: {result}");
    let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().expect("text")).expect("JSON");
    assert_eq!(&text, arguments, "{result}");
    assert_eq!(enforced_field(result), Some(&json!(false)), "{result}");
    assert_no_markers(result);
}

fn assert_clean(result: &Value) {
    assert_eq!(result["isError"], false, "{result}");
    assert_eq!(enforced_field(result), None, "a clean result is enforced: {result}");
    assert_no_markers(result);
}

/// The three rollouts of one server: enforced, report-only everywhere, report-only for
/// `ratio` alone.
fn servers(pipeline: impl Fn() -> Option<Pipeline>) -> Vec<(&'static str, ContractedServer<RolloutProbe>)> {
    vec![
        ("enforced", contracted(probe(), pipeline())),
        ("report_only", contracted(probe(), pipeline()).report_only()),
        (
            "report_only_for(ratio)",
            contracted(probe(), pipeline()).report_only_for("ratio").expect("ratio is contracted"),
        ),
    ]
}

#[test]
fn a_complete_result_that_breaks_its_contract_is_refused_enforced_and_sent_report_only() {
    runtime().block_on(async {
        for (rollout, server) in servers(|| None) {
            let handle = server.clone();
            let mut wire = Wire::legacy(server, false).await;
            let ratio = wire.call("ratio", broken()).await;
            // Without the tasks extension the task tool answers complete: a second tool.
            let other = wire.call(TASK_TOOL, broken()).await;
            match rollout {
                "enforced" => {
                    assert_refused(&ratio);
                    assert_refused(&other);
                }
                "report_only" => {
                    assert_sent_unenforced(&ratio, &broken());
                    assert_sent_unenforced(&other, &broken());
                }
                _ => {
                    assert_sent_unenforced(&ratio, &broken());
                    assert_refused(&other);
                    assert_eq!(handle.enforcement(TASK_TOOL), Enforcement::Enforce);
                }
            }
            // Clean control on both tools.
            assert_clean(&wire.call("ratio", clean()).await);
            assert_clean(&wire.call(TASK_TOOL, clean()).await);
            let stats = handle.stats();
            assert_eq!(stats.calls, 4, "{rollout}: {stats:?}");
            assert_eq!(
                stats.report_only + stats.errors(ErrorCode::OutputContractViolation),
                2,
                "{rollout}: every broken result is either refused or reported: {stats:?}"
            );
        }
    });
}

#[test]
fn a_task_result_that_breaks_its_contract_is_refused_enforced_and_sent_report_only() {
    runtime().block_on(async {
        for (rollout, server) in servers(|| None) {
            let mut wire = Wire::modern(server, true);
            let created = wire.call(TASK_TOOL, broken()).await;
            let result = wire.task_result(&created).await;
            if rollout == "report_only" {
                assert_sent_unenforced(&result, &broken());
            } else {
                // `report_only_for(ratio)` leaves the task tool enforced.
                assert_refused(&result);
            }
            // Every poll sees the same result.
            let again = wire.request("tasks/get", json!({ "taskId": created["taskId"] })).await;
            assert_eq!(again["result"]["result"], result, "{rollout}");
            // Clean control, as a task too.
            let created = wire.call(TASK_TOOL, clean()).await;
            assert_clean(&wire.task_result(&created).await);
        }
    });
}

#[test]
fn report_only_for_the_task_tool_reaches_its_task_results() {
    runtime().block_on(async {
        let server = contracted(probe(), None).report_only_for(TASK_TOOL).expect("contracted");
        let mut wire = Wire::modern(server, true);
        let created = wire.call(TASK_TOOL, broken()).await;
        assert_sent_unenforced(&wire.task_result(&created).await, &broken());
        // The complete tool stays enforced on the same session.
        assert_refused(&wire.call("ratio", broken()).await);
    });
}

fn cached_pipeline() -> Pipeline {
    Pipeline::builder().cache(Arc::new(InMemoryCache::new())).build()
}

#[test]
fn a_report_only_violation_is_never_cached_complete_or_task_and_a_clean_result_is() {
    runtime().block_on(async {
        for (tasks, tool) in [(false, "ratio"), (true, TASK_TOOL)] {
            for (rollout, server) in servers(|| Some(cached_pipeline())) {
                if rollout == "report_only_for(ratio)" && tool == TASK_TOOL {
                    continue; // The task tool is enforced there; covered by the enforced case.
                }
                let runs = Arc::clone(&server.inner().runs);
                let handle = server.clone();
                let mut wire = Wire::modern(server, tasks);
                let mut outcome = async |arguments: Value| {
                    let first = wire.call(tool, arguments).await;
                    if first["resultType"] == "task" {
                        wire.task_result(&first).await
                    } else {
                        first
                    }
                };
                let first = outcome(broken()).await;
                let second = outcome(broken()).await;
                assert_eq!(runs.load(Ordering::SeqCst), 2, "{rollout} {tool}: the handler ran again");
                for result in [&first, &second] {
                    assert_ne!(result["_meta"][CACHE_META_KEY], "hit", "{rollout} {tool}: {result}");
                    if rollout == "enforced" {
                        assert_refused(result);
                    } else {
                        assert_sent_unenforced(result, &broken());
                    }
                }
                // Clean control: admitted once, then served from the cache.
                let computed = outcome(clean()).await;
                assert_clean(&computed);
                let hit = outcome(clean()).await;
                assert_clean(&hit);
                assert_eq!(hit["_meta"][CACHE_META_KEY], "hit", "{rollout} {tool}: {hit}");
                assert_eq!(runs.load(Ordering::SeqCst), 3, "{rollout} {tool}: the clean result was cached");
                let stats = handle.stats();
                assert_eq!((stats.cache_hits, stats.cache_misses), (1, 3), "{rollout} {tool}: {stats:?}");
            }
        }
    });
}

#[test]
fn a_cache_hit_for_a_task_client_is_a_task_and_carries_no_enforced_member() {
    runtime().block_on(async {
        let server = contracted(probe(), Some(cached_pipeline())).report_only();
        let mut wire = Wire::modern(server, true);
        let created = wire.call(TASK_TOOL, clean()).await;
        assert_clean(&wire.task_result(&created).await);
        // The hit is the adapter's own task, as the handler answered this tool.
        let created = wire.call(TASK_TOOL, clean()).await;
        let hit = wire.task_result(&created).await;
        assert_eq!(hit["_meta"][CACHE_META_KEY], "hit", "{hit}");
        assert_clean(&hit);
    });
}

#[test]
fn report_only_for_a_tool_without_a_contract_is_refused_naming_the_contracted_tools() {
    let err = contracted(probe(), None).report_only_for("ratoi").expect_err("a misspelt tool");
    let text = err.to_string();
    assert!(text.contains("no contract is bound to tool `ratoi`"), "{text}");
    assert!(text.contains("the contracted tools are `ratio`, `ratio_down`, `ratio_slow`, `ratio_task`"), "{text}");
    // The fix the message points to: one of the names it lists.
    let fixed = contracted(probe(), None).report_only_for("ratio").expect("a contracted tool");
    assert_eq!(fixed.enforcement("ratio"), Enforcement::Report);
}

#[test]
fn report_only_settings_survive_with_pipeline_and_the_pipelines_own_carry_through() {
    let server = contracted(probe(), None).report_only_for("ratio").expect("contracted");
    let server = server.with_pipeline(Pipeline::builder().report_only_for(TASK_TOOL).build());
    assert_eq!(server.enforcement("ratio"), Enforcement::Report, "the server's setting survives");
    assert_eq!(server.enforcement(TASK_TOOL), Enforcement::Report, "the pipeline's setting holds");
    assert_eq!(server.enforcement("ratio_down"), Enforcement::Enforce, "the rest stays enforced");
    // Control: the default server enforces every tool.
    let plain = contracted(probe(), None);
    for tool in ["ratio", TASK_TOOL, "ratio_down"] {
        assert_eq!(plain.enforcement(tool), Enforcement::Enforce, "{tool}");
    }
}
