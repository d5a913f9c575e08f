// Help lines shared by several commands' usage: the environment the object-store trace readers read
// (shared/trace/sources/), for every command that reads a trace location (test/unit/cli-env-help.test.ts
// holds each command's help to the variables its code reads).

export const OBJECT_STORE_ENV = `s3:// AWS_REGION or AWS_DEFAULT_REGION, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL,
      AWS_VIRTUAL_HOSTED_STYLE_REQUEST, AWS_ACCESS_KEY_ID, AWS_PROFILE (and the AWS SDK's own); gs://
      GOOGLE_SERVICE_ACCOUNT or GOOGLE_SERVICE_ACCOUNT_PATH, GOOGLE_SERVICE_ACCOUNT_KEY, STORAGE_EMULATOR_HOST;
      azure:// AZURE_STORAGE_ACCOUNT_NAME, AZURE_STORAGE_ACCOUNT_KEY or AZURE_STORAGE_ACCESS_KEY,
      AZURE_STORAGE_ENDPOINT or AZURE_ENDPOINT.`;
