//! First start: the realm's organization, an admin human and one all-scope admin key.

use super::{Service, ServiceError, keys::NewApiKey};
use crate::domain::{Actor, ActorType, IdKind, ScopeSet};
use crate::store;

/// The setting that names the realm a database belongs to; set once, by the first start.
pub const SETTING_REALM: &str = "realm";
const SETTING_REALM_ORGANIZATION: &str = "realm_organization_id";
const SETTING_ADMIN_USER: &str = "admin_user_id";

/// What a start found or created.
#[derive(Debug, Clone, PartialEq)]
pub enum BootstrapOutcome {
    /// The database already belonged to this realm; nothing was created.
    AlreadyBootstrapped {
        /// The realm's organization.
        realm_organization: Actor,
    },
    /// The database was empty; the realm's identities were created.
    Created {
        /// The realm's organization.
        realm_organization: Actor,
        /// The admin human, controlled by the organization.
        admin_user: Actor,
    },
}

impl Service {
    /// Makes sure the database holds this realm's identities, creating them on an empty database.
    ///
    /// `persist_admin_secret` receives the admin key's secret before the transaction commits, so a
    /// start that cannot save the secret leaves the database empty and can simply be repeated.
    pub async fn bootstrap(
        &self,
        persist_admin_secret: impl FnOnce(&str) -> Result<(), String>,
    ) -> Result<BootstrapOutcome, ServiceError> {
        let mut transaction = self.store().begin().await?;
        if let Some(stored_realm) = store::settings::get(&mut transaction.conn(), SETTING_REALM).await? {
            if !self.realm().is(&stored_realm) {
                return Err(ServiceError::validation(
                    "INTERAI_REALM",
                    format!(
                        "this database belongs to realm {stored_realm}, but the configured realm is {}; \
                         a realm cannot be renamed because peers know its objects by it",
                        self.realm()
                    ),
                ));
            }
            let organization_id = store::settings::get(&mut transaction.conn(), SETTING_REALM_ORGANIZATION)
                .await?
                .ok_or_else(|| ServiceError::internal("realm setting present without its organization"))?;
            let organization_id = crate::domain::PublicId::parse(&organization_id)
                .map_err(|_| ServiceError::internal("stored realm organization ID is malformed"))?;
            let realm_organization = store::actors::find(&mut transaction.conn(), &organization_id)
                .await?
                .ok_or_else(|| ServiceError::internal("the realm organization is missing"))?;
            // Databases bootstrapped before spaces existed get their default space now.
            self.ensure_default_space(&mut transaction, &realm_organization.id)
                .await?;
            transaction.commit().await?;
            return Ok(BootstrapOutcome::AlreadyBootstrapped { realm_organization });
        }

        let now = self.now();
        let organization_id = self.new_id(IdKind::Organization);
        let realm_organization = Actor {
            id: organization_id.clone(),
            actor_type: ActorType::Organization,
            display_name: self.realm().as_str().to_owned(),
            controller: None,
            root_controller: organization_id.clone(),
            origin: self.realm().as_str().to_owned(),
            verified_by_email: false,
            verified_by_domain: true,
            created_at: now,
        };
        let admin_user = Actor {
            id: self.new_id(IdKind::User),
            actor_type: ActorType::User,
            display_name: "Administrator".to_owned(),
            controller: Some(organization_id.clone()),
            root_controller: organization_id.clone(),
            origin: self.realm().as_str().to_owned(),
            verified_by_email: false,
            verified_by_domain: false,
            created_at: now,
        };
        store::actors::insert(&mut transaction.conn(), &realm_organization).await?;
        store::actors::insert(&mut transaction.conn(), &admin_user).await?;
        let issued = self
            .create_api_key_in(
                &mut transaction,
                NewApiKey {
                    actor_id: admin_user.id.clone(),
                    scopes: ScopeSet::all(),
                    expires_at: None,
                    label: Some("bootstrap admin key".to_owned()),
                },
            )
            .await?;
        for (name, value) in [
            (SETTING_REALM, self.realm().as_str().to_owned()),
            (SETTING_REALM_ORGANIZATION, organization_id.as_str().to_owned()),
            (SETTING_ADMIN_USER, admin_user.id.as_str().to_owned()),
        ] {
            store::settings::put(&mut transaction.conn(), name, &value, now).await?;
        }
        self.ensure_default_space(&mut transaction, &organization_id).await?;
        persist_admin_secret(&issued.secret).map_err(ServiceError::internal)?;
        transaction.commit().await?;
        tracing::info!(realm = %self.realm(), organization = %realm_organization.id, admin = %admin_user.id, "realm bootstrapped");
        Ok(BootstrapOutcome::Created {
            realm_organization,
            admin_user,
        })
    }
}

impl Service {
    /// The realm's admin user: who the command line acts as when an admin changes content or spaces (the admin API
    /// acts as the key's actor instead).
    pub async fn realm_admin(&self) -> Result<crate::domain::PublicId, ServiceError> {
        let mut reader = self.store().reader().await?;
        let stored = store::settings::get(&mut reader.conn(), SETTING_ADMIN_USER)
            .await?
            .ok_or_else(|| ServiceError::internal("this realm has no admin user recorded"))?;
        crate::domain::PublicId::parse(&stored).map_err(|_| ServiceError::internal("stored admin user ID is malformed"))
    }
}
