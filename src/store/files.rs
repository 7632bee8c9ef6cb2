//! Owner-only permissions for the files of an embedded SQLite database: the database, its WAL and shared memory.
//!
//! The database holds key hashes, the audit log and everything published, so no other local user may read it.
//! SQLite creates the `-wal`, `-shm` and `-journal` files with the mode of the database file, so restricting the
//! database file before the first connection opens it covers the files created later. Files left with wider modes
//! by an earlier version or by hand are narrowed at every start, with a warning naming the file.

use std::path::{Path, PathBuf};

use super::StoreError;

/// Suffixes of the files SQLite keeps next to a database.
const COMPANION_SUFFIXES: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Creates `database` empty with mode 0600 if it does not exist (an empty file is a valid SQLite database), and
/// narrows it and its companion files to their owner if group or others have any access. Does nothing on systems
/// without Unix permissions.
pub fn restrict_database_files(database: &Path) -> Result<(), StoreError> {
    #[cfg(unix)]
    {
        create_private_file(database)?;
        restrict_to_owner(database)?;
        for suffix in COMPANION_SUFFIXES {
            let companion = with_suffix(database, suffix);
            if companion.exists() {
                restrict_to_owner(&companion)?;
            }
        }
    }
    #[cfg(not(unix))]
    let _ = (database, COMPANION_SUFFIXES);
    Ok(())
}

/// `database` with `suffix` appended to its file name, as SQLite names its companion files.
fn with_suffix(database: &Path, suffix: &str) -> PathBuf {
    let mut name = database.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

fn permission_error(path: &Path, source: std::io::Error) -> StoreError {
    StoreError::Permissions {
        path: path.display().to_string(),
        source,
    }
}

#[cfg(unix)]
fn create_private_file(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::OpenOptionsExt;
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(_) => Ok(()),
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(permission_error(path, error)),
    }
}

/// Removes every permission of group and others from `path`, logging when there were any.
#[cfg(unix)]
fn restrict_to_owner(path: &Path) -> Result<(), StoreError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path)
        .map_err(|error| permission_error(path, error))?
        .permissions()
        .mode()
        & 0o7777;
    if mode & 0o077 != 0 {
        let narrowed = mode & 0o700;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(narrowed))
            .map_err(|error| permission_error(path, error))?;
        tracing::warn!(
            path = %path.display(),
            previous_mode = %format!("{mode:04o}"),
            mode = %format!("{narrowed:04o}"),
            "database file was readable by other users; restricted it to its owner"
        );
    }
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode_of(path: &Path) -> u32 {
        std::fs::metadata(path).expect("metadata").permissions().mode() & 0o777
    }

    #[test]
    fn a_missing_database_is_created_for_its_owner_only() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let database = directory.path().join("interai.db");
        restrict_database_files(&database).expect("restricted");
        assert_eq!(mode_of(&database), 0o600);
        assert_eq!(std::fs::metadata(&database).expect("metadata").len(), 0);
    }

    #[test]
    fn existing_files_with_wider_modes_are_narrowed() {
        let directory = tempfile::tempdir().expect("temporary directory");
        let database = directory.path().join("interai.db");
        for path in [
            database.clone(),
            with_suffix(&database, "-wal"),
            with_suffix(&database, "-shm"),
        ] {
            std::fs::write(&path, b"").expect("written");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o664)).expect("chmod");
        }
        restrict_database_files(&database).expect("restricted");
        for suffix in ["", "-wal", "-shm"] {
            assert_eq!(mode_of(&with_suffix(&database, suffix)), 0o600, "{suffix}");
        }
        assert!(!with_suffix(&database, "-journal").exists());
    }
}
