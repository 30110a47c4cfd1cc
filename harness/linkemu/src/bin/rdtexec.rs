//! rdtexec: what harness/procs.py's `Processes.start` does between fork and exec, as a
//! program of its own, so the harness can start it with `subprocess.Popen` without a
//! `preexec_fn`. CPython then starts it with vfork() instead of fork()ing the whole
//! (large) harness or grader process, which cost more CPU than the start itself.
//!
//!   rdtexec [--ppid PID] [--fsize BYTES] [--netns-fd FD] [--new-netns] [--nice N]
//!           [--status-fd FD] -- PROGRAM [ARG...]
//!
//! In this order, as `_child_setup` did: SIGKILL when the parent dies (PR_SET_PDEATHSIG,
//! kept across exec for a program that gains no privileges), exit 1 at once if the
//! parent is not PID already; SIGTERM, SIGINT (and SIGPIPE, which Rust's runtime ignores)
//! back to their defaults; RLIMIT_FSIZE soft = hard = BYTES, RLIMIT_CORE 0; setns into
//! the network namespace FD (then closed); a new network namespace with its loopback up;
//! nice N where allowed (below 0 takes root; otherwise the default, silently); then
//! execv(PROGRAM, [PROGRAM, ARG...]) with the environment as given.
//!
//! PROGRAM is a path: the harness resolved it on the program's PATH already. A failure
//! prints one line on stderr, writes `STEP ERRNO` to the status FD (close-on-exec, so
//! the harness reads end-of-file when the exec succeeded), and exits 127 when PROGRAM
//! does not exist, 126 when it cannot be executed, 125 for any other step.

use std::ffi::{CString, OsString};
use std::io::{self, Write};
use std::os::unix::ffi::OsStringExt;

const USAGE: &str = "usage: rdtexec [--ppid PID] [--fsize BYTES] [--netns-fd FD] [--new-netns] [--nice N] \
                     [--status-fd FD] -- PROGRAM [ARG...]";

#[derive(Debug, Default, PartialEq)]
struct Options {
    ppid: Option<libc::pid_t>,
    fsize: Option<u64>,
    netns_fd: Option<libc::c_int>,
    new_netns: bool,
    nice: Option<libc::c_int>,
    status_fd: Option<libc::c_int>,
    program: Vec<OsString>,
}

fn parse(args: Vec<OsString>) -> Result<Options, String> {
    fn number<T: std::str::FromStr>(flag: &str, value: Option<OsString>) -> Result<T, String> {
        let value = value.ok_or_else(|| format!("{flag} needs a value"))?;
        value
            .to_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("{flag}: not a number: {value:?}"))
    }
    let mut o = Options::default();
    let mut it = args.into_iter();
    while let Some(arg) = it.next() {
        match arg.to_str() {
            Some("--ppid") => o.ppid = Some(number("--ppid", it.next())?),
            Some("--fsize") => o.fsize = Some(number("--fsize", it.next())?),
            Some("--netns-fd") => o.netns_fd = Some(number("--netns-fd", it.next())?),
            Some("--new-netns") => o.new_netns = true,
            Some("--nice") => o.nice = Some(number("--nice", it.next())?),
            Some("--status-fd") => o.status_fd = Some(number("--status-fd", it.next())?),
            Some("--") => {
                o.program = it.collect();
                break;
            }
            _ => return Err(format!("unknown option {arg:?}")),
        }
    }
    if o.program.is_empty() {
        return Err("no program after --".into());
    }
    Ok(o)
}

/// A failed step: one line on stderr, `STEP ERRNO` on the status fd, the exit code.
fn fail(status_fd: Option<libc::c_int>, step: &str, what: &str, err: io::Error) -> ! {
    let errno = err.raw_os_error().unwrap_or(0);
    let _ = writeln!(io::stderr(), "rdtexec: {what}: {err}");
    if let Some(fd) = status_fd {
        let msg = format!("{step} {errno}");
        // SAFETY: writing a buffer we own to a descriptor; a failure changes nothing here.
        unsafe { libc::write(fd, msg.as_ptr().cast(), msg.len()) };
    }
    let code = match (step, errno) {
        ("exec", libc::ENOENT | libc::ENOTDIR) => 127,
        ("exec", _) => 126,
        _ => 125,
    };
    std::process::exit(code)
}

fn check(rc: libc::c_int) -> io::Result<()> {
    if rc == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Bring `lo` of this process's network namespace up (SIOCSIFFLAGS, no netlink).
fn loopback_up() -> io::Result<()> {
    // struct ifreq: the name in 16 bytes, then the union whose first member is the flags.
    let mut ifreq = [0u8; 40];
    ifreq[..2].copy_from_slice(b"lo");
    // SAFETY: a plain socket; the ioctls read and write within the 40-byte ifreq.
    unsafe {
        let s = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        check(s)?;
        let done = check(libc::ioctl(s, libc::SIOCGIFFLAGS, ifreq.as_mut_ptr())).and_then(|_| {
            let flags = u16::from_ne_bytes([ifreq[16], ifreq[17]]) | libc::IFF_UP as u16;
            ifreq[16..18].copy_from_slice(&flags.to_ne_bytes());
            check(libc::ioctl(s, libc::SIOCSIFFLAGS, ifreq.as_ptr()))
        });
        libc::close(s);
        done
    }
}

fn main() {
    let o = match parse(std::env::args_os().skip(1).collect()) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("rdtexec: {e}\n{USAGE}");
            std::process::exit(2)
        }
    };
    let sfd = o.status_fd;
    // SAFETY: each call below is a plain system call on this single-threaded process,
    // with arguments that live until it returns.
    unsafe {
        if let Some(fd) = sfd {
            // Inherited without close-on-exec (pass_fds); set it, so a successful exec closes it.
            if check(libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC)).is_err() {
                fail(None, "status-fd", "bad --status-fd", io::Error::last_os_error());
            }
        }
        // If the harness is killed hard (SIGKILL, a notebook kernel dying), its programs
        // go with it instead of running on; if it died before this line, go now.
        if let Err(e) = check(libc::prctl(
            libc::PR_SET_PDEATHSIG,
            libc::SIGKILL as libc::c_ulong,
            0,
            0,
            0,
        )) {
            fail(sfd, "pdeathsig", "prctl(PR_SET_PDEATHSIG)", e);
        }
        if let Some(ppid) = o.ppid {
            if libc::getppid() != ppid {
                std::process::exit(1);
            }
        }
        // The harness ignores a second SIGTERM while it cleans up, and exec keeps an
        // ignored signal ignored: the program gets the defaults back. SIGPIPE too: Rust's
        // runtime ignored it before main, CPython had reset it before exec'ing us.
        for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGPIPE] {
            libc::signal(sig, libc::SIG_DFL);
        }
        if let Some(cap) = o.fsize {
            let lim = libc::rlimit {
                rlim_cur: cap,
                rlim_max: cap,
            };
            if let Err(e) = check(libc::setrlimit(libc::RLIMIT_FSIZE, &lim)) {
                fail(sfd, "rlimit", "setrlimit(RLIMIT_FSIZE)", e);
            }
        }
        let none = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if let Err(e) = check(libc::setrlimit(libc::RLIMIT_CORE, &none)) {
            fail(sfd, "rlimit", "setrlimit(RLIMIT_CORE)", e);
        }
        if let Some(fd) = o.netns_fd {
            if let Err(e) = check(libc::setns(fd, libc::CLONE_NEWNET)) {
                fail(sfd, "setns", "setns into the host's network namespace failed", e);
            }
            libc::close(fd);
        }
        if o.new_netns {
            // A network namespace of its own, loopback up: others join it by its pid.
            if let Err(e) = check(libc::unshare(libc::CLONE_NEWNET)) {
                fail(sfd, "unshare", "unshare(CLONE_NEWNET) failed", e);
            }
            if let Err(e) = loopback_up() {
                fail(sfd, "loopback", "bringing up lo in the new network namespace failed", e);
            }
        }
        if let Some(nice) = o.nice {
            // Before exec, so the program's threads inherit it; not root: the default.
            libc::setpriority(libc::PRIO_PROCESS, 0, nice);
        }
    }
    let argv: Vec<CString> = o
        .program
        .into_iter()
        .map(|a| CString::new(a.into_vec()))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|_| {
            fail(
                sfd,
                "args",
                "an argument holds a NUL byte",
                io::Error::from_raw_os_error(libc::EINVAL),
            )
        });
    let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    // SAFETY: argv's strings outlive the call; the array ends with NULL.
    unsafe { libc::execv(ptrs[0], ptrs.as_ptr()) };
    let err = io::Error::last_os_error();
    fail(sfd, "exec", &format!("cannot run {:?}", argv[0]), err)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_every_option() {
        let o = parse(args(&[
            "--ppid",
            "7",
            "--fsize",
            "1024",
            "--netns-fd",
            "5",
            "--new-netns",
            "--nice",
            "-10",
            "--status-fd",
            "9",
            "--",
            "/bin/echo",
            "--ppid",
            "x y",
        ]))
        .unwrap();
        assert_eq!(
            o,
            Options {
                ppid: Some(7),
                fsize: Some(1024),
                netns_fd: Some(5),
                new_netns: true,
                nice: Some(-10),
                status_fd: Some(9),
                program: args(&["/bin/echo", "--ppid", "x y"])
            }
        );
    }

    #[test]
    fn refuses_bad_usage() {
        assert!(parse(args(&["--",])).unwrap_err().contains("no program"));
        assert!(parse(args(&["/bin/true"])).unwrap_err().contains("unknown option"));
        assert!(parse(args(&["--fsize", "big", "--", "/bin/true"]))
            .unwrap_err()
            .contains("not a number"));
        assert!(parse(args(&["--nice"])).unwrap_err().contains("needs a value"));
    }
}
