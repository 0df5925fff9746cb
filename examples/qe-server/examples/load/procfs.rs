//! What `/proc` says about the processes under load (Linux only; `None` or nothing
//! elsewhere): CPU time, resident set, children.

use std::time::Duration;

/// The fields of `/proc/<pid>/stat` after the command name, which may hold spaces (the
/// fields after its closing parenthesis do not): `[0]` is the state, `[1]` the parent.
fn stat_fields(pid: &str) -> Option<Vec<String>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(stat.rsplit_once(')')?.1.split_whitespace().map(str::to_owned).collect())
}

/// The CPU time (user + system) a process has used, from `/proc/<pid>/stat` (`USER_HZ` is
/// 100 on every Linux the kernel ABI covers). `pid` may be `self`.
pub(super) fn cpu_time(pid: &str) -> Option<Duration> {
    let fields = stat_fields(pid)?;
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(Duration::from_millis(ticks * 10))
}

/// The resident set of a process in KiB: `VmRSS` of `/proc/<pid>/status`.
pub(super) fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The processes whose parent is `pid` (a scan of `/proc`, which needs no kernel option,
/// unlike `/proc/<pid>/task/<tid>/children`).
pub(super) fn children(pid: u32) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let parent = pid.to_string();
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|child| stat_fields(&child.to_string()).is_some_and(|fields| fields.get(1) == Some(&parent)))
        .collect()
}
