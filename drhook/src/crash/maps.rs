//! Which mapped file an address belongs to, from `/proc/self/maps`, read
//! with `open`/`read` into stack buffers: usable in signal handlers.

use crate::sys::linebuf::LineBuf;

fn hex_field(s: &[u8]) -> Option<u64> {
    let mut v: u64 = 0;
    if s.is_empty() {
        return None;
    }
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = v.checked_mul(16)?.checked_add(d as u64)?;
    }
    Some(v)
}

/// Parses one maps line; returns (start, end, file offset, path).
pub fn parse_line(line: &[u8]) -> Option<(u64, u64, u64, &[u8])> {
    let mut fields = line.splitn(6, |&c| c == b' ');
    let range = fields.next()?;
    let _perms = fields.next()?;
    let offset = hex_field(fields.next()?)?;
    let _dev = fields.next()?;
    let _inode = fields.next()?;
    let path = fields.next().map(|p| p.trim_ascii()).unwrap_or(b"");
    let dash = range.iter().position(|&c| c == b'-')?;
    Some((
        hex_field(&range[..dash])?,
        hex_field(&range[dash + 1..])?,
        offset,
        path,
    ))
}

/// Appends `module(+0xoffset)` for `addr` (basename of the mapped file), or
/// `??` when the address is not in a file mapping.
pub fn describe(out: &mut LineBuf, addr: u64) {
    // SAFETY: opening a fixed NUL-terminated path.
    let fd = unsafe {
        libc::open(
            c"/proc/self/maps".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        out.str("??");
        return;
    }
    let mut buf = [0u8; 4096];
    let mut line = [0u8; 4096];
    let mut len = 0usize;
    let mut found = false;
    'read: loop {
        // SAFETY: reading into a valid buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) };
        if n <= 0 {
            break;
        }
        for &c in &buf[..n as usize] {
            if c != b'\n' {
                if len < line.len() {
                    line[len] = c;
                    len += 1;
                }
                continue;
            }
            if let Some((start, end, off, path)) = parse_line(&line[..len])
                && start <= addr
                && addr < end
            {
                if path.is_empty() {
                    out.str("[anonymous]");
                } else {
                    let base = path.rsplit(|&c| c == b'/').next().unwrap_or(path);
                    out.bytes(base);
                }
                out.str("(+").hex(addr - start + off).str(")");
                found = true;
                break 'read;
            }
            len = 0;
        }
    }
    // SAFETY: closing our descriptor.
    unsafe { libc::close(fd) };
    if !found {
        out.str("??");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines() {
        let l = b"55c84526b000-55c84526c000 r-xp 00001000 08:01 123 /usr/bin/crash_test";
        assert_eq!(
            parse_line(l),
            Some((
                0x55c84526b000,
                0x55c84526c000,
                0x1000,
                &b"/usr/bin/crash_test"[..]
            ))
        );
        let anon = b"7ffd1000-7ffd2000 rw-p 00000000 00:00 0 ";
        assert_eq!(parse_line(anon).unwrap().3, b"");
        assert_eq!(parse_line(b"garbage"), None);
    }

    #[test]
    fn describes_own_code() {
        let mut b = LineBuf::new();
        describe(&mut b, describes_own_code as *const () as usize as u64);
        let s = String::from_utf8_lossy(b.as_bytes()).into_owned();
        let exe = std::env::current_exe().unwrap();
        let name = exe.file_name().unwrap().to_string_lossy();
        assert!(s.starts_with(&format!("{name}(+0x")), "{s}");
        let mut b = LineBuf::new();
        describe(&mut b, 8);
        assert_eq!(b.as_bytes(), b"??");
    }
}
