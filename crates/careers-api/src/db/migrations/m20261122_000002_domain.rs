//! Companies, employer (org) profiles, talent profiles with their certificates, experiences and
//! skills, jobs and job applications. Foreign keys and uniqueness are enforced here.

use sea_orm_migration::prelude::*;
use sea_orm_migration::schema::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[derive(DeriveIden)]
enum IdentitiesUsers {
    Table,
    Id,
}

#[derive(DeriveIden)]
enum OrgCompanies {
    Table,
    Id,
    Name,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum OrgUserProfiles {
    Table,
    Id,
    IdentitiesUserId,
    CompanyId,
    Title,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum CareersUserProfiles {
    Table,
    Id,
    IdentitiesUserId,
    Headline,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum CareersCertificates {
    Table,
    Id,
    CareersUserProfileId,
    Name,
    Issuer,
    IssuedOn,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum CareersExperiences {
    Table,
    Id,
    CareersUserProfileId,
    JobTitle,
    CompanyName,
    StartedOn,
    EndedOn,
    Description,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum CareersSkills {
    Table,
    Id,
    CareersUserProfileId,
    Name,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum CareersJobs {
    Table,
    Id,
    CompanyId,
    Title,
    Description,
    Published,
    CreatedAt,
    UpdatedAt,
}

#[derive(DeriveIden)]
enum CareersJobApplications {
    Table,
    Id,
    CareersJobId,
    CareersUserProfileId,
    Status,
    CoverLetter,
    CreatedAt,
    UpdatedAt,
}

fn fk(
    from_table: impl IntoIden,
    from_col: impl IntoIden,
    to_table: impl IntoIden,
    to_col: impl IntoIden,
    on_delete: ForeignKeyAction,
) -> ForeignKeyCreateStatement {
    ForeignKey::create()
        .from(from_table, from_col)
        .to(to_table, to_col)
        .on_delete(on_delete)
        .to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        use ForeignKeyAction::{Cascade, Restrict};

        manager
            .create_table(
                Table::create()
                    .table(OrgCompanies::Table)
                    .col(big_pk_auto(OrgCompanies::Id))
                    .col(string_uniq(OrgCompanies::Name))
                    .col(timestamp_with_time_zone(OrgCompanies::CreatedAt))
                    .col(timestamp_with_time_zone(OrgCompanies::UpdatedAt))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(OrgUserProfiles::Table)
                    .col(big_pk_auto(OrgUserProfiles::Id))
                    .col(big_integer_uniq(OrgUserProfiles::IdentitiesUserId))
                    .col(big_integer(OrgUserProfiles::CompanyId))
                    .col(string(OrgUserProfiles::Title))
                    .col(timestamp_with_time_zone(OrgUserProfiles::CreatedAt))
                    .col(timestamp_with_time_zone(OrgUserProfiles::UpdatedAt))
                    .foreign_key(&mut fk(
                        OrgUserProfiles::Table,
                        OrgUserProfiles::IdentitiesUserId,
                        IdentitiesUsers::Table,
                        IdentitiesUsers::Id,
                        Cascade,
                    ))
                    .foreign_key(&mut fk(
                        OrgUserProfiles::Table,
                        OrgUserProfiles::CompanyId,
                        OrgCompanies::Table,
                        OrgCompanies::Id,
                        Restrict,
                    ))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(CareersUserProfiles::Table)
                    .col(big_pk_auto(CareersUserProfiles::Id))
                    .col(big_integer_uniq(CareersUserProfiles::IdentitiesUserId))
                    .col(string(CareersUserProfiles::Headline))
                    .col(timestamp_with_time_zone(CareersUserProfiles::CreatedAt))
                    .col(timestamp_with_time_zone(CareersUserProfiles::UpdatedAt))
                    .foreign_key(&mut fk(
                        CareersUserProfiles::Table,
                        CareersUserProfiles::IdentitiesUserId,
                        IdentitiesUsers::Table,
                        IdentitiesUsers::Id,
                        Cascade,
                    ))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(CareersCertificates::Table)
                    .col(big_pk_auto(CareersCertificates::Id))
                    .col(big_integer(CareersCertificates::CareersUserProfileId))
                    .col(string(CareersCertificates::Name))
                    .col(string_null(CareersCertificates::Issuer))
                    .col(date_null(CareersCertificates::IssuedOn))
                    .col(timestamp_with_time_zone(CareersCertificates::CreatedAt))
                    .col(timestamp_with_time_zone(CareersCertificates::UpdatedAt))
                    .foreign_key(&mut fk(
                        CareersCertificates::Table,
                        CareersCertificates::CareersUserProfileId,
                        CareersUserProfiles::Table,
                        CareersUserProfiles::Id,
                        Cascade,
                    ))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(CareersExperiences::Table)
                    .col(big_pk_auto(CareersExperiences::Id))
                    .col(big_integer(CareersExperiences::CareersUserProfileId))
                    .col(string(CareersExperiences::JobTitle))
                    .col(string_null(CareersExperiences::CompanyName))
                    .col(date_null(CareersExperiences::StartedOn))
                    .col(date_null(CareersExperiences::EndedOn))
                    .col(text_null(CareersExperiences::Description))
                    .col(timestamp_with_time_zone(CareersExperiences::CreatedAt))
                    .col(timestamp_with_time_zone(CareersExperiences::UpdatedAt))
                    .foreign_key(&mut fk(
                        CareersExperiences::Table,
                        CareersExperiences::CareersUserProfileId,
                        CareersUserProfiles::Table,
                        CareersUserProfiles::Id,
                        Cascade,
                    ))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(CareersSkills::Table)
                    .col(big_pk_auto(CareersSkills::Id))
                    .col(big_integer(CareersSkills::CareersUserProfileId))
                    .col(string(CareersSkills::Name))
                    .col(timestamp_with_time_zone(CareersSkills::CreatedAt))
                    .col(timestamp_with_time_zone(CareersSkills::UpdatedAt))
                    .foreign_key(&mut fk(
                        CareersSkills::Table,
                        CareersSkills::CareersUserProfileId,
                        CareersUserProfiles::Table,
                        CareersUserProfiles::Id,
                        Cascade,
                    ))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(CareersJobs::Table)
                    .col(big_pk_auto(CareersJobs::Id))
                    .col(big_integer(CareersJobs::CompanyId))
                    .col(string(CareersJobs::Title))
                    .col(text(CareersJobs::Description))
                    .col(boolean(CareersJobs::Published))
                    .col(timestamp_with_time_zone(CareersJobs::CreatedAt))
                    .col(timestamp_with_time_zone(CareersJobs::UpdatedAt))
                    .foreign_key(&mut fk(
                        CareersJobs::Table,
                        CareersJobs::CompanyId,
                        OrgCompanies::Table,
                        OrgCompanies::Id,
                        Restrict,
                    ))
                    .to_owned(),
            )
            .await?;

        manager
            .create_table(
                Table::create()
                    .table(CareersJobApplications::Table)
                    .col(big_pk_auto(CareersJobApplications::Id))
                    .col(big_integer(CareersJobApplications::CareersJobId))
                    .col(big_integer(CareersJobApplications::CareersUserProfileId))
                    .col(string(CareersJobApplications::Status))
                    .col(text(CareersJobApplications::CoverLetter))
                    .col(timestamp_with_time_zone(CareersJobApplications::CreatedAt))
                    .col(timestamp_with_time_zone(CareersJobApplications::UpdatedAt))
                    .foreign_key(&mut fk(
                        CareersJobApplications::Table,
                        CareersJobApplications::CareersJobId,
                        CareersJobs::Table,
                        CareersJobs::Id,
                        Restrict,
                    ))
                    .foreign_key(&mut fk(
                        CareersJobApplications::Table,
                        CareersJobApplications::CareersUserProfileId,
                        CareersUserProfiles::Table,
                        CareersUserProfiles::Id,
                        Cascade,
                    ))
                    .to_owned(),
            )
            .await?;

        // Lookups by parent, and the uniqueness rules of the domain.
        let indexes = [
            Index::create()
                .name("org_user_profiles_company_id")
                .table(OrgUserProfiles::Table)
                .col(OrgUserProfiles::CompanyId)
                .to_owned(),
            Index::create()
                .name("careers_certificates_profile_id")
                .table(CareersCertificates::Table)
                .col(CareersCertificates::CareersUserProfileId)
                .to_owned(),
            Index::create()
                .name("careers_experiences_profile_id")
                .table(CareersExperiences::Table)
                .col(CareersExperiences::CareersUserProfileId)
                .to_owned(),
            Index::create()
                .name("careers_skills_profile_id_name")
                .table(CareersSkills::Table)
                .col(CareersSkills::CareersUserProfileId)
                .col(CareersSkills::Name)
                .unique()
                .to_owned(),
            Index::create()
                .name("careers_jobs_company_id")
                .table(CareersJobs::Table)
                .col(CareersJobs::CompanyId)
                .to_owned(),
            Index::create()
                .name("careers_job_applications_job_profile")
                .table(CareersJobApplications::Table)
                .col(CareersJobApplications::CareersJobId)
                .col(CareersJobApplications::CareersUserProfileId)
                .unique()
                .to_owned(),
            Index::create()
                .name("careers_job_applications_profile_id")
                .table(CareersJobApplications::Table)
                .col(CareersJobApplications::CareersUserProfileId)
                .to_owned(),
        ];
        for index in indexes {
            manager.create_index(index).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for table in [
            CareersJobApplications::Table.into_iden(),
            CareersJobs::Table.into_iden(),
            CareersSkills::Table.into_iden(),
            CareersExperiences::Table.into_iden(),
            CareersCertificates::Table.into_iden(),
            CareersUserProfiles::Table.into_iden(),
            OrgUserProfiles::Table.into_iden(),
            OrgCompanies::Table.into_iden(),
        ] {
            manager
                .drop_table(Table::drop().table(table).to_owned())
                .await?;
        }
        Ok(())
    }
}
