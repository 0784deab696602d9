//! A stop that children obey: asked once (with the exit code the caller
//! will end with), it reaches every child started with it, running or
//! started later. It is a value handed around, never process-wide state:
//! an engine owns one, `loopwatch gate0 run` owns one.

use std::sync::{Arc, Mutex};

/// A stop, shared by clones.
#[derive(Clone, Default)]
pub struct Stop(Arc<Mutex<State>>);

/// Told the code once the stop is asked.
type Listener = Box<dyn Fn(i32) + Send>;

#[derive(Default)]
struct State {
    asked: Option<i32>,
    next_id: u64,
    listeners: Vec<(u64, Listener)>,
}

impl std::fmt::Debug for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Stop").field(&self.asked()).finish()
    }
}

impl Stop {
    /// A stop nobody asked for yet.
    pub fn new() -> Self {
        Stop::default()
    }

    /// Asks for the stop; the first code asked is kept. Every child
    /// started with this stop is stopped (its tree: TERM, grace, KILL).
    pub fn ask(&self, code: i32) {
        let Ok(mut s) = self.0.lock() else { return };
        if s.asked.is_some() {
            return;
        }
        s.asked = Some(code);
        for (_, f) in &s.listeners {
            f(code);
        }
    }

    /// The code asked, once asked.
    pub fn asked(&self) -> Option<i32> {
        self.0.lock().ok().and_then(|s| s.asked)
    }

    /// Calls `f` when the stop is asked (at once when it already was),
    /// until the returned guard is dropped.
    pub(super) fn listen(&self, f: impl Fn(i32) + Send + 'static) -> Listening {
        let Ok(mut s) = self.0.lock() else {
            return Listening { stop: None, id: 0 };
        };
        if let Some(code) = s.asked {
            f(code);
        }
        let id = s.next_id;
        s.next_id += 1;
        s.listeners.push((id, Box::new(f)));
        Listening {
            stop: Some(self.clone()),
            id,
        }
    }
}

/// Stops listening when dropped.
pub(super) struct Listening {
    stop: Option<Stop>,
    id: u64,
}

impl Drop for Listening {
    fn drop(&mut self) {
        if let Some(stop) = &self.stop
            && let Ok(mut s) = stop.0.lock()
        {
            s.listeners.retain(|(id, _)| *id != self.id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI32, Ordering};

    #[test]
    fn listeners_hear_the_first_code_once_even_when_late() {
        let stop = Stop::new();
        let heard = Arc::new(AtomicI32::new(0));
        let h = heard.clone();
        let guard = stop.listen(move |c| {
            h.fetch_add(c, Ordering::SeqCst);
        });
        stop.ask(143);
        stop.ask(130);
        assert_eq!(stop.asked(), Some(143));
        assert_eq!(heard.load(Ordering::SeqCst), 143);
        drop(guard);
        let late = Arc::new(AtomicI32::new(0));
        let l = late.clone();
        let _g = stop.listen(move |c| l.store(c, Ordering::SeqCst));
        assert_eq!(late.load(Ordering::SeqCst), 143);
    }
}
