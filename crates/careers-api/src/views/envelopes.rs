//! The response envelopes: each payload under its model's table name (CONTRACT §5), with
//! `meta` beside a list. The shapes inside them are the models' views.

use serde::Serialize;

use crate::models::careers::job::{EmployerJobView, JobView, MarketplaceJobView};
use crate::models::careers::job_application::{
    CandidateApplicationItem, EmployerApplicationDetail, EmployerApplicationItem,
};
use crate::models::careers::job_application_event::EventView;
use crate::models::careers::job_application_note::NoteView;
use crate::models::careers::user_profile::TalentProfileView;
use crate::models::identities::email_verification::EmailVerificationView;
use crate::models::identities::session::SessionView;
use crate::models::identities::user::UserView;
use crate::models::org::company::{CompanyView, PublicCompanyView};
use crate::models::org::invitation::InvitationView;
use crate::models::org::user_profile::OrgUserProfileView;
use crate::models::org::webhook_endpoint::{DeliveryView, EndpointView};

/// `meta` of a list (CONTRACT §5).
#[derive(Debug, Clone, Copy, Serialize, utoipa::ToSchema)]
pub struct Meta {
    pub page: u64,
    pub per_page: u64,
    pub total: u64,
}

impl Meta {
    pub fn new(page: u64, per_page: u64, total: u64) -> Self {
        Self {
            page,
            per_page,
            total,
        }
    }
}

/// Declares a response envelope: the payload under the model's table name, plus `meta` for lists.
macro_rules! envelope {
    ($(#[$doc:meta])* $name:ident { $key:ident: $ty:ty }) => {
        $(#[$doc])*
        #[derive(Debug, serde::Serialize, utoipa::ToSchema)]
        pub struct $name {
            pub $key: $ty,
        }
    };
    ($(#[$doc:meta])* $name:ident { $key:ident: $ty:ty, meta }) => {
        $(#[$doc])*
        #[derive(Debug, serde::Serialize, utoipa::ToSchema)]
        pub struct $name {
            pub $key: $ty,
            pub meta: Meta,
        }
    };
}

envelope!(IdentitiesUserOne {
    identities_users: UserView
});

envelope!(IdentitiesUserList { identities_users: Vec<UserView>, meta });

envelope!(
    /// `GET /identities/email_verifications/current`.
    EmailVerificationOne { email_verifications: EmailVerificationView }
);

envelope!(
    /// `GET .../sessions`: the live sessions, most recently used first.
    SessionList { sessions: Vec<SessionView> }
);

envelope!(
    /// `GET .../sessions/current`.
    SessionOne { sessions: SessionView }
);

envelope!(OrgUserProfileOne {
    org_user_profiles: OrgUserProfileView
});

envelope!(OrgUserProfileList { org_user_profiles: Vec<OrgUserProfileView>, meta });

envelope!(OrgCompanyList { org_companies: Vec<CompanyView>, meta });

envelope!(OrgCompanyOne {
    org_companies: CompanyView
});

envelope!(
    /// `GET /marketplace/org/companies/:slug`.
    PublicCompanyOne { org_companies: PublicCompanyView }
);

envelope!(OrgInvitationOne {
    org_invitations: InvitationView
});

envelope!(OrgInvitationList { org_invitations: Vec<InvitationView>, meta });

envelope!(CareersUserProfileOne {
    careers_user_profiles: TalentProfileView
});

envelope!(EmployerApplicationOne {
    careers_job_applications: EmployerApplicationDetail
});

envelope!(CandidateApplicationList {
    careers_job_applications: Vec<CandidateApplicationItem>,
    meta
});

envelope!(CandidateApplicationOne {
    careers_job_applications: CandidateApplicationItem
});

/// The employer's page of applications, borrowing its text from the rows it was read from.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct EmployerApplicationList<'a> {
    pub careers_job_applications: Vec<EmployerApplicationItem<'a>>,
    pub meta: Meta,
}

envelope!(CareersJobOne {
    careers_jobs: JobView
});

envelope!(CareersJobList { careers_jobs: Vec<JobView>, meta });

envelope!(EmployerJobOne {
    careers_jobs: EmployerJobView
});

envelope!(MarketplaceJobOne {
    careers_jobs: MarketplaceJobView
});

envelope!(MarketplaceJobList { careers_jobs: Vec<MarketplaceJobView>, meta });

/// The changed application: the employer's list item (also the webhook events' `data`).
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct EmployerApplicationChanged {
    pub careers_job_applications: EmployerApplicationItem<'static>,
}

envelope!(ApplicationNoteOne {
    careers_job_application_notes: NoteView
});

envelope!(ApplicationNoteList { careers_job_application_notes: Vec<NoteView>, meta });

envelope!(ApplicationEventList { careers_job_application_events: Vec<EventView>, meta });

envelope!(OrgWebhookEndpointOne {
    org_webhook_endpoints: EndpointView
});

envelope!(OrgWebhookEndpointList {
    org_webhook_endpoints: Vec<EndpointView>
});

envelope!(OrgWebhookDeliveryList { org_webhook_deliveries: Vec<DeliveryView>, meta });
