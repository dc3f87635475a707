// Prints the OpenAPI document built from the code, without a database or Redis: preview mode
// builds the module graph (all swagger needs) but instantiates no provider.
import { NestFactory } from '@nestjs/core';
import { AppModule } from '../apps/api/src/app.module';
import { loadConfig } from '@app/config';
import { buildOpenApiDocument, configuredSunsets } from '../apps/api/src/openapi/openapi-document';

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { preview: true, logger: false, abortOnError: false });
  const options = { sunsets: configuredSunsets(loadConfig({})) };
  process.stdout.write(`${JSON.stringify(buildOpenApiDocument(app, options), null, 2)}\n`);
  await app.close();
}

main().catch((err: Error) => {
  process.stderr.write(`openapi document: ${err.message}\n`);
  process.exit(1);
});
