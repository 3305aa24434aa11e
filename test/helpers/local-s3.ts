/**
 * The S3 settings of a store at a local test server (one that stands in for S3: silent, or answering
 * as S3 does in a case the real server cannot be made to show), with dummy credentials.
 */
import { loadConfig } from '../../schemas/config-loader.ts';
import { type S3Config } from '../../schemas/config.ts';

export function localS3Config(port: number): S3Config {
  return {
    ...loadConfig({ env: {} }).s3,
    endpoint: `http://127.0.0.1:${port}`,
    region: 'us-east-1',
    accessKeyId: 'k',
    secretAccessKey: 's',
    forcePathStyle: true,
  };
}
