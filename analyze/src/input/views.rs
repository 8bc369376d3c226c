//! Damaged traces for libbabeltrace2: a temporary trace directory (a
//! view) holding a damaged trace's readable packets, locked while in use
//! and removed by the next run when its owner died.

use std::path::{Path, PathBuf};

use crate::input::damage::StreamCheck;

#[cfg(feature = "babeltrace2")]
/// A temporary trace directory: the metadata and the chosen streams
/// (links to whole files, copies of just the readable packets of the
/// others), removed when dropped. While it lives, its run holds an
/// exclusive lock on `DIR.lock` beside it: runs in other PID namespaces
/// share the temporary directory and their process ids, so the lock, not
/// the pid in the name, tells a live view from a killed run's.
pub(crate) struct View {
    pub(crate) dir: PathBuf,
    pub(crate) original: PathBuf,
    lock: Option<std::fs::File>,
}

#[cfg(feature = "babeltrace2")]
impl Drop for View {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if self.lock.take().is_some() {
            let _ = std::fs::remove_file(lock_path(&self.dir));
        }
    }
}

#[cfg(feature = "babeltrace2")]
/// Views are named `dyntrace-analyze-PID-NANOS-N` in the temporary directory.
const VIEW_PREFIX: &str = "dyntrace-analyze-";

#[cfg(feature = "babeltrace2")]
fn lock_path(dir: &Path) -> PathBuf {
    let mut name = dir.as_os_str().to_owned();
    name.push(".lock");
    PathBuf::from(name)
}

#[cfg(feature = "babeltrace2")]
/// Removes the views of runs that were killed before they could: those
/// whose lock no process holds. A view without a lock file is being made
/// (the lock comes first) or was left by an older build: it is removed
/// once it is an hour old.
fn remove_stale_views() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !name.starts_with(VIEW_PREFIX) || name.ends_with(".lock") {
            continue;
        }
        let dir = entry.path();
        let stale = match std::fs::File::open(lock_path(&dir)) {
            Ok(file) => file.try_lock().is_ok(),
            Err(_) => entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 3600),
        };
        if stale {
            let _ = std::fs::remove_dir_all(&dir);
            let _ = std::fs::remove_file(lock_path(&dir));
        }
    }
}

#[cfg(feature = "babeltrace2")]
/// A new, locked view directory of a name no other run has.
fn new_view_dir() -> Result<(PathBuf, std::fs::File), String> {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    loop {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        if n == 0 {
            remove_stale_views();
        }
        let dir =
            std::env::temp_dir().join(format!("{VIEW_PREFIX}{}-{nanos}-{n}", std::process::id()));
        let fail = |e: std::io::Error| format!("{}: {e}", dir.display());
        // The lock file is created first and only by us (create_new), so
        // a name another run took is passed over, never reused.
        let lock = match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(lock_path(&dir))
        {
            Ok(lock) => lock,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(fail(e)),
        };
        lock.lock().map_err(fail)?;
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok((dir, lock)),
            Err(e) => {
                let _ = std::fs::remove_file(lock_path(&dir));
                if e.kind() != std::io::ErrorKind::AlreadyExists {
                    return Err(fail(e));
                }
            }
        }
    }
}

#[cfg(feature = "babeltrace2")]
impl View {
    pub(crate) fn new(original: &Path, streams: &[&StreamCheck]) -> Result<View, String> {
        let (dir, lock) = new_view_dir()?;
        let fail = |e: std::io::Error| format!("{}: {e}", dir.display());
        let view = View {
            dir: dir.clone(),
            original: original.to_path_buf(),
            lock: Some(lock),
        };
        let absolute =
            std::fs::canonicalize(original).map_err(|e| format!("{}: {e}", original.display()))?;
        std::os::unix::fs::symlink(absolute.join("metadata"), dir.join("metadata"))
            .map_err(fail)?;
        for check in streams {
            let Some(name) = check.path.file_name() else {
                continue;
            };
            if check.whole_file() {
                std::os::unix::fs::symlink(absolute.join(name), dir.join(name)).map_err(fail)?;
            } else if !check.packets.is_empty() {
                copy_packets(&check.path, &check.packets, &dir.join(name))
                    .map_err(|e| format!("{}: {e}", check.path.display()))?;
            }
        }
        Ok(view)
    }

    /// Names the user's trace in place of the view in a message.
    pub(crate) fn unmap(&self, text: &str) -> String {
        text.replace(
            &*self.dir.to_string_lossy(),
            &self.original.to_string_lossy(),
        )
    }
}

#[cfg(feature = "babeltrace2")]
/// Writes the byte ranges `packets` of `from` one after the other into `to`.
fn copy_packets(from: &Path, packets: &[(u64, u64)], to: &Path) -> std::io::Result<()> {
    use std::io::{Read, Seek};
    let mut src = std::fs::File::open(from)?;
    let mut dst = std::fs::File::create(to)?;
    for &(offset, size) in packets {
        src.seek(std::io::SeekFrom::Start(offset))?;
        std::io::copy(&mut (&mut src).take(size), &mut dst)?;
    }
    Ok(())
}
