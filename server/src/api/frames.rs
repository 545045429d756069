//! A run's events as the bytes of an SSE body: `data: {json}\n\n` per event, then
//! `data: [DONE]\n\n` once the run is over.
//!
//! Events that are ready together leave in one frame (one write, one TCP segment with
//! `TCP_NODELAY`): a reply is dozens of small events, and a write per event cost more than
//! everything else the server does for them. The frame is built straight from the events
//! as they are polled, with nothing held between frames: a reply waiting on a slow model
//! keeps no buffer here (a `ready_chunks(256)` allocated a 4 KiB one per open stream, and
//! again after every frame).

use std::{
    convert::Infallible,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use futures::{Stream, StreamExt};

use crate::{metrics::OpenStream, runs::EventStream};

/// Events written in one frame at most.
const EVENTS_PER_FRAME: usize = 256;

/// The SSE body of a run's events.
pub(super) struct Frames {
    events: EventStream,
    /// Counted open for as long as the body lives, to its end or until the client left.
    open: Option<OpenStream>,
    /// A frame read before the body was handed over ([`Frames::prime`]), given first.
    first: Option<Bytes>,
}

impl Frames {
    pub(super) fn new(events: EventStream) -> Self {
        Self {
            events,
            open: Some(OpenStream::new()),
            first: None,
        }
    }

    /// Waits up to `wait` for the first events, so that they leave in the same write as
    /// the response's head: hyper writes the head alone, a write and a TCP segment more
    /// per reply, when the body has nothing ready at its first poll, which is always the
    /// case for a run spawned a moment before. Nothing waits longer than it would have:
    /// a frame that is ready is sent with the head at once, and after `wait` the head
    /// goes alone.
    pub(super) async fn prime(&mut self, wait: Duration) {
        if let Ok(Some(Ok(frame))) = tokio::time::timeout(wait, self.next()).await {
            self.first = Some(frame);
        }
    }
}

fn push(frame: &mut Vec<u8>, data: &str) {
    // Event text is JSON from serde, which never holds a raw line break, so one `data:`
    // line per event is the whole SSE event.
    frame.extend_from_slice(b"data: ");
    frame.extend_from_slice(data.as_bytes());
    frame.extend_from_slice(b"\n\n");
}

impl Stream for Frames {
    type Item = Result<Bytes, Infallible>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if let Some(frame) = self.first.take() {
            return Poll::Ready(Some(Ok(frame)));
        }
        if self.open.is_none() {
            return Poll::Ready(None);
        }
        let mut frame = Vec::new();
        for _ in 0..EVENTS_PER_FRAME {
            match self.events.as_mut().poll_next(cx) {
                Poll::Ready(Some(data)) => push(&mut frame, &data),
                Poll::Ready(None) => {
                    push(&mut frame, "[DONE]");
                    self.open = None;
                    break;
                }
                Poll::Pending if frame.is_empty() => return Poll::Pending,
                Poll::Pending => break,
            }
        }
        Poll::Ready(Some(Ok(Bytes::from(frame))))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use futures::{stream, StreamExt};

    use super::*;

    fn events(texts: &[&str]) -> EventStream {
        let items: Vec<Arc<str>> = texts.iter().map(|text| Arc::from(*text)).collect();
        Box::pin(stream::iter(items))
    }

    /// Frames of events that arrive when the test sends them, as a run's do.
    fn live() -> (tokio::sync::mpsc::UnboundedSender<Arc<str>>, Frames) {
        let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Arc<str>>();
        let events: EventStream =
            Box::pin(tokio_stream::wrappers::UnboundedReceiverStream::new(rx));
        (tx, Frames::new(events))
    }

    #[tokio::test]
    async fn ready_events_share_a_frame_and_the_body_ends_with_done() {
        let frames: Vec<Bytes> = Frames::new(events(&[r#"{"a":1}"#, r#"{"b":2}"#]))
            .map(|frame| frame.unwrap_or_default())
            .collect()
            .await;
        assert_eq!(frames.len(), 1);
        assert_eq!(
            frames[0],
            Bytes::from("data: {\"a\":1}\n\ndata: {\"b\":2}\n\ndata: [DONE]\n\n")
        );
    }

    #[tokio::test]
    async fn a_long_run_is_cut_into_frames_of_at_most_256_events() {
        let many: Vec<String> = (0..600).map(|n| format!("{{\"n\":{n}}}")).collect();
        let texts: Vec<&str> = many.iter().map(String::as_str).collect();
        let frames: Vec<Bytes> = Frames::new(events(&texts))
            .map(|frame| frame.unwrap_or_default())
            .collect()
            .await;
        assert_eq!(frames.len(), 3);
        let all: Vec<u8> = frames.concat();
        let text = String::from_utf8(all).unwrap_or_default();
        assert_eq!(text.matches("data: ").count(), 601);
        assert!(text.ends_with("data: [DONE]\n\n"));
    }

    #[tokio::test]
    async fn waiting_events_leave_as_they_come() {
        let (tx, mut frames) = live();
        tx.send(Arc::from("1")).ok();
        assert_eq!(
            frames.next().await.and_then(Result::ok),
            Some(Bytes::from("data: 1\n\n"))
        );
        tx.send(Arc::from("2")).ok();
        drop(tx);
        assert_eq!(
            frames.next().await.and_then(Result::ok),
            Some(Bytes::from("data: 2\n\ndata: [DONE]\n\n"))
        );
        assert!(frames.next().await.is_none());
    }

    #[tokio::test]
    async fn a_primed_body_gives_its_first_frame_first_and_the_rest_after() {
        let (tx, mut frames) = live();
        // Nothing comes in time: the head would leave alone, and nothing is lost.
        frames.prime(Duration::from_millis(10)).await;
        assert!(frames.first.is_none());
        tx.send(Arc::from("1")).ok();
        tx.send(Arc::from("2")).ok();
        // Sent while the response waits: both are the first frame.
        let sender = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            tx.send(Arc::from("3")).ok();
        });
        frames.prime(Duration::from_secs(5)).await;
        assert_eq!(frames.first, Some(Bytes::from("data: 1\n\ndata: 2\n\n")));
        assert_eq!(
            frames.next().await.and_then(Result::ok),
            Some(Bytes::from("data: 1\n\ndata: 2\n\n"))
        );
        sender.await.unwrap();
        assert_eq!(
            frames.next().await.and_then(Result::ok),
            Some(Bytes::from("data: 3\n\ndata: [DONE]\n\n"))
        );
        assert!(frames.next().await.is_none());
    }

    #[tokio::test]
    async fn a_run_over_before_its_response_is_one_frame_with_its_end() {
        let mut frames = Frames::new(events(&["{}"]));
        frames.prime(Duration::from_secs(5)).await;
        let all: Vec<Bytes> = frames.map(|f| f.unwrap_or_default()).collect().await;
        assert_eq!(all, vec![Bytes::from("data: {}\n\ndata: [DONE]\n\n")]);
    }
}
