//! Keeping the build cache from growing without bound: a build of the
//! 8-port switch is about 28 MB, and every change to the RTL makes a new
//! one under a new digest.
//!
//! A finished build is a directory `<top>-<digest>` ([`crate::build`]); its
//! port list's modification time says when it was last used
//! ([`mark_used`]). [`prune`] keeps the [`KEPT_BUILDS`] most recently used
//! builds of a top and removes the rest, and removes unfinished build
//! directories (`<top>-<digest>.building-<pid>`) left by a build that was
//! stopped.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Finished builds of one top kept: the one in use and the one before it,
/// so that going back one revision of the RTL finds it built.
pub const KEPT_BUILDS: usize = 2;

/// An unfinished build directory older than this was left by a build that
/// was stopped (a build of the 8-port switch takes minutes, not hours).
pub const ABANDONED_AFTER: Duration = Duration::from_secs(6 * 60 * 60);

/// Bytes of a build's digest in its directory's name (as hex digits).
pub(crate) const DIGEST_BYTES: usize = 8;

/// The marker between a build's name and its builder's process ID.
pub(crate) const BUILDING: &str = ".building-";

/// Marks a finished build, by its port list `ports_file`, as used now. A
/// build whose mark cannot be set only looks older to [`prune`].
pub(crate) fn mark_used(ports_file: &Path) {
    if let Ok(file) = fs::File::options().append(true).open(ports_file) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// Removes from `cache` every finished build of `top` but the
/// [`KEPT_BUILDS`] most recently used (`in_use` always among those kept),
/// and every unfinished build directory, of any top, not touched for
/// [`ABANDONED_AFTER`]. `used_at` reads when a finished build was last
/// used. Returns the directories removed; one that cannot be read or
/// removed is left as it is.
pub(crate) fn prune(
    cache: &Path,
    top: &str,
    in_use: &Path,
    used_at: impl Fn(&Path) -> Option<SystemTime>,
) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(cache) else {
        return Vec::new();
    };
    let now = SystemTime::now();
    let mut finished = Vec::new();
    let mut removed = Vec::new();
    for path in entries.filter_map(|entry| entry.ok().map(|e| e.path())) {
        let Some(name) = path.file_name().and_then(|name| name.to_str()) else {
            continue;
        };
        if name.contains(BUILDING) {
            let age = fs::metadata(&path)
                .and_then(|meta| meta.modified())
                .ok()
                .and_then(|modified| now.duration_since(modified).ok());
            if age.is_some_and(|age| age > ABANDONED_AFTER) && fs::remove_dir_all(&path).is_ok() {
                removed.push(path);
            }
        } else if is_build_of(name, top) && path != in_use {
            finished.push((used_at(&path), path));
        }
    }
    // Most recently used first; a build whose use cannot be read, last.
    finished.sort_by_key(|build| std::cmp::Reverse(build.0));
    for (_, path) in finished.into_iter().skip(KEPT_BUILDS.saturating_sub(1)) {
        if fs::remove_dir_all(&path).is_ok() {
            removed.push(path);
        }
    }
    removed
}

/// Whether a directory called `name` is a finished build of `top`:
/// `<top>-` and the digest's hex digits, nothing more.
fn is_build_of(name: &str, top: &str) -> bool {
    name.strip_prefix(top)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|digest| {
            digest.len() == 2 * DIGEST_BYTES && digest.bytes().all(|b| b.is_ascii_hexdigit())
        })
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;

    /// A fresh, empty directory for one test.
    fn scratch(test: &str) -> io::Result<PathBuf> {
        let dir = std::env::temp_dir().join(format!(
            "weft-verilated-cache-{test}-{}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir)?;
        Ok(dir)
    }

    fn digest(n: u8) -> String {
        format!("{n:016x}")
    }

    #[test]
    fn only_the_most_recently_used_builds_of_the_top_stay() -> io::Result<()> {
        let cache = scratch("kept")?;
        // Five builds of `t`, used at times 10, 50, 30, 40, 20 (seconds).
        let used: Vec<(PathBuf, u64)> = [10, 50, 30, 40, 20]
            .into_iter()
            .zip(0..)
            .map(|(at, n)| (cache.join(format!("t-{}", digest(n))), at))
            .collect();
        let other_top = cache.join(format!("t_other-{}", digest(0)));
        let not_a_build = cache.join("t-notes");
        for dir in used
            .iter()
            .map(|(dir, _)| dir)
            .chain([&other_top, &not_a_build])
        {
            fs::create_dir_all(dir)?;
        }
        // In use: the one used longest ago (time 10); the next most
        // recently used is the one used at 50.
        let in_use = used[0].0.clone();
        let used_at = |path: &Path| {
            used.iter()
                .find(|(dir, _)| dir == path)
                .map(|&(_, at)| SystemTime::UNIX_EPOCH + Duration::from_secs(at))
        };
        let mut removed = prune(&cache, "t", &in_use, used_at);
        removed.sort();
        let mut expected = vec![used[2].0.clone(), used[3].0.clone(), used[4].0.clone()];
        expected.sort();
        assert_eq!(removed, expected);
        for kept in [&used[0].0, &used[1].0, &other_top, &not_a_build] {
            assert!(kept.exists(), "{} was removed", kept.display());
        }
        fs::remove_dir_all(&cache)
    }

    #[test]
    fn an_unfinished_build_goes_only_once_it_is_old() -> io::Result<()> {
        let cache = scratch("unfinished")?;
        let stopped = cache.join(format!("t-{}{BUILDING}1", digest(1)));
        let running = cache.join(format!("t-{}{BUILDING}2", digest(2)));
        fs::create_dir_all(stopped.join("obj"))?;
        fs::create_dir_all(&running)?;
        let long_ago = SystemTime::now() - ABANDONED_AFTER - Duration::from_secs(60);
        fs::File::open(&stopped)?.set_modified(long_ago)?;
        let in_use = cache.join(format!("t-{}", digest(3)));
        let removed = prune(&cache, "t", &in_use, |_| None);
        assert_eq!(removed, vec![stopped.clone()]);
        assert!(!stopped.exists() && running.exists());
        fs::remove_dir_all(&cache)
    }

    #[test]
    fn a_build_is_named_by_its_top_and_a_whole_digest() {
        assert!(is_build_of(&format!("t-{}", digest(7)), "t"));
        assert!(!is_build_of(&format!("t_2-{}", digest(7)), "t"));
        assert!(!is_build_of("t-0123", "t"));
        assert!(!is_build_of(&format!("t-{}x", digest(7)), "t"));
    }

    #[test]
    fn marking_a_build_used_makes_it_the_newest() -> io::Result<()> {
        let cache = scratch("mark")?;
        let ports = cache.join("ports.tsv");
        fs::write(&ports, "clock\t1\tin\t8\n")?;
        fs::File::options()
            .append(true)
            .open(&ports)?
            .set_modified(SystemTime::UNIX_EPOCH)?;
        mark_used(&ports);
        let modified = fs::metadata(&ports)?.modified()?;
        assert!(modified > SystemTime::now() - Duration::from_secs(60));
        fs::remove_dir_all(&cache)
    }
}
