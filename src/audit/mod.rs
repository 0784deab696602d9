//! A run that can be checked by someone else, offline: the journal's hash
//! chain and the files it names checked ([`verify`]), the run in one
//! archive ([`archive`]), SSH signatures made and checked the way git
//! makes them ([`sign`]), and who may decide which gate ([`policy`]).

pub mod archive;
pub mod policy;
pub mod sign;
pub mod verify;

use std::path::Path;

pub use verify::{Break, Verified};

/// Verifies a worktree, a `.pipeline` folder or an export archive.
/// An archive is opened as [`archive::open`] says (a hostile one is a
/// break, never an error): its files against its manifest, its signature
/// when `allowed_signers` is given, then its pipeline against the
/// repository made from its bundle.
pub fn verify_path(path: &Path, allowed_signers: Option<&Path>) -> Verified {
    let mut out = Verified::default();
    if archive::is_archive(path) {
        let opened = match archive::open(path) {
            Ok(o) => o,
            Err(e) => {
                out.broken("archive", e.to_string());
                return out;
            }
        };
        for (place, what) in &opened.problems {
            out.broken(place.clone(), what.clone());
        }
        match (&opened.signature, allowed_signers) {
            (Some(sig), Some(allowed)) => {
                out.signatures += 1;
                if let Err(e) = sign::verify(allowed, &opened.manifest_bytes, sig) {
                    out.broken(format!("archive {}", archive::MANIFEST_SIG), e.to_string());
                }
            }
            (None, Some(_)) => out.broken(
                format!("archive {}", archive::MANIFEST),
                "not signed, and --allowed-signers asks for a signed export",
            ),
            _ => {}
        }
        verify::verify_pipeline(
            &verify::Target {
                pipeline_dir: &opened.pipeline,
                repo: &opened.worktree,
                allowed_signers,
            },
            &mut out,
        );
        return out;
    }
    let pipeline = crate::journal::Pipeline::from_user_path(path);
    verify::verify_pipeline(
        &verify::Target {
            pipeline_dir: pipeline.dir(),
            repo: pipeline.worktree(),
            allowed_signers,
        },
        &mut out,
    );
    out
}
