//! The options of `lwcbench link --video` (docs/link.md "Video frames (version 2)").
use clap::Args;

#[derive(Args, Default)]
pub(super) struct VideoArgs {
    /// Video over the link: a camera sends the frames of a YUV4MPEG2 (.y4m) clip (FILE; without
    /// one the bundled clip), sealed in parts, to a server that reassembles and checks them bit
    /// for bit (docs/link.md "Video frames"). Writes video_frames.csv and link_video.csv. The
    /// server keeps the highest part counter it accepted in KEY_FILE.video-replay and refuses an
    /// earlier session's parts as replays.
    #[arg(long, value_name = "FILE", num_args = 0..=1, default_missing_value = "")]
    pub(super) video: Option<String>,
    /// --video: frames per second the camera takes (default: the clip's rate, else 25).
    #[arg(long, value_name = "N", requires = "video")]
    pub(super) fps: Option<f64>,
    /// --video: frames sent (default: every frame of the clip; more repeat the clip).
    #[arg(long, value_name = "N", requires = "video")]
    pub(super) frames: Option<u32>,
    /// --video: most bytes of one part on the wire (header + frame bytes + tag). Default: one
    /// 262,144-byte message over MQTT; 1472 over UDP (a 1500-byte MTU path); at most 65,507 over UDP.
    #[arg(long, value_name = "N", requires = "video")]
    pub(super) frame_part_bytes: Option<usize>,
    /// --video: an incomplete frame counts as lost this long after its first part arrived.
    #[arg(long, value_name = "DURATION", default_value = "1s", requires = "video")]
    pub(super) frame_deadline: String,
}
