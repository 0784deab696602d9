//! The terminal's keys, read as events into the loop's channel, by a
//! reader that can step aside: while another program has the terminal (the
//! pager), the reader is dropped, so no key meant for that program is
//! read here; it is started again when the program is done. A Ctrl-C the
//! terminal sends to the program while it has the terminal reaches
//! loopwatch too (the same process group): it is not a request to quit.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures_util::StreamExt;
use ratatui::crossterm::event::EventStream;
use tokio::sync::watch;

use super::controller::Ui;
use crate::watch::Live;

/// The handle of the key reader.
pub struct Keys {
    pause: watch::Sender<bool>,
    paused: watch::Receiver<bool>,
    away: Arc<AtomicBool>,
}

impl Keys {
    /// Starts reading the terminal's events into `live`'s channel.
    pub fn spawn(live: &Live<Ui>) -> Keys {
        let (pause, mut asked) = watch::channel(false);
        let (ack, paused) = watch::channel(false);
        let tx = live.sender();
        tokio::spawn(async move {
            loop {
                while *asked.borrow() {
                    let _ = ack.send(true);
                    if asked.changed().await.is_err() {
                        return;
                    }
                }
                let _ = ack.send(false);
                let mut events = EventStream::new();
                loop {
                    tokio::select! {
                        ev = events.next() => match ev {
                            Some(Ok(ev)) => {
                                if tx.send(crate::watch::Input::Other(Ui::Term(ev))).is_err() {
                                    return;
                                }
                            }
                            // EOF or an error on the tty: the terminal is gone.
                            Some(Err(_)) | None => {
                                let _ = tx.send(crate::watch::Input::Other(Ui::TermClosed));
                                return;
                            }
                        },
                        changed = asked.changed() => {
                            if changed.is_err() {
                                return;
                            }
                            if *asked.borrow() {
                                break;
                            }
                        }
                    }
                }
                // Dropping the stream stops its reading thread before the
                // next key is read.
                drop(events);
            }
        });
        Keys {
            pause,
            paused,
            away: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Stops reading until [`Keys::resume`]; returns once no key is read.
    pub async fn step_aside(&mut self) {
        self.away.store(true, Ordering::SeqCst);
        let _ = self.pause.send(true);
        let _ = self.paused.wait_for(|p| *p).await;
    }

    /// Reads the terminal's events again.
    pub fn resume(&self) {
        let _ = self.pause.send(false);
        self.away.store(false, Ordering::SeqCst);
    }

    /// True while another program has the terminal (a Ctrl-C then is its).
    pub fn away(&self) -> Arc<AtomicBool> {
        self.away.clone()
    }
}
