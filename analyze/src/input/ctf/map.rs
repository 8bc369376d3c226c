//! A stream file mapped read-only into memory: its packets are read in
//! place, in order, and each is given back to the kernel once read, so
//! that the process's resident memory stays a few packets however long
//! the file.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::Path;

/// A read-only, private mapping of a whole file.
pub struct Map {
    ptr: *mut libc::c_void,
    len: usize,
}

// SAFETY: the mapping is read-only and owned by one `Map`; the bytes it
// points at are never written through it.
unsafe impl Send for Map {}
// SAFETY: nothing writes through the mapping, so threads may read it at
// once; `done_with` only drops pages, which a read fetches again.
unsafe impl Sync for Map {}

impl Map {
    /// Maps `path` (an empty file maps to no bytes).
    pub fn open(path: &Path) -> std::io::Result<Map> {
        let file = File::open(path)?;
        let len = usize::try_from(file.metadata()?.len())
            .map_err(|_| std::io::Error::other("file too large to map"))?;
        if len == 0 {
            return Ok(Map {
                ptr: std::ptr::null_mut(),
                len: 0,
            });
        }
        // SAFETY: a fresh read-only private mapping of an open file
        // descriptor; the kernel picks the address. The file may be
        // closed once mapped.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: advice on the range just mapped; failing advice is
        // harmless, so its result is not looked at.
        unsafe { libc::madvise(ptr, len, libc::MADV_SEQUENTIAL) };
        Ok(Map { ptr, len })
    }

    /// The file's bytes.
    pub fn bytes(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `ptr` maps `len` readable bytes until `drop`. A file
        // truncated while mapped makes reads past its new end fault
        // (SIGBUS): LTTng only appends to stream files.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }

    /// Gives back the pages wholly inside `len` bytes at `at`, read and
    /// not needed again (their bytes are copied out by then).
    pub fn done_with(&self, at: usize, len: usize) {
        const PAGE: usize = 4096;
        let start = at.div_ceil(PAGE) * PAGE;
        let end = ((at + len).min(self.len) / PAGE) * PAGE;
        if end > start {
            // SAFETY: the range lies inside the mapping; MADV_DONTNEED on
            // a private read-only file mapping only drops pages, which a
            // later read would fetch again from the file.
            unsafe {
                libc::madvise(
                    (self.ptr as *mut u8).add(start) as *mut libc::c_void,
                    end - start,
                    libc::MADV_DONTNEED,
                )
            };
        }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: `ptr` and `len` are the mapping made in `open`,
            // unmapped once, here.
            unsafe { libc::munmap(self.ptr, self.len) };
        }
    }
}
