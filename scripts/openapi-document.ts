// Prints the OpenAPI document built from the code, without a database or Redis: preview mode
// builds the module graph (all swagger needs) but instantiates no provider.
import { DiscoveryService, ModulesContainer, NestFactory } from '@nestjs/core';
import { AppModule } from '../apps/api/src/app.module';
import { loadConfig } from '@app/config';
import { buildOpenApiDocument, configuredSunsets } from '../apps/api/src/openapi/openapi-document';
import { RouteTable } from '../apps/api/src/policy/route-table';

async function main(): Promise<void> {
  const app = await NestFactory.create(AppModule, { preview: true, logger: false, abortOnError: false });
  // Preview mode made no DiscoveryService; the module graph is there all the same.
  const options = {
    routes: RouteTable.of(new DiscoveryService(app.get(ModulesContainer))),
    sunsets: configuredSunsets(loadConfig({})),
  };
  process.stdout.write(`${JSON.stringify(buildOpenApiDocument(app, options), null, 2)}\n`);
  await app.close();
}

main().catch((err: Error) => {
  process.stderr.write(`openapi document: ${err.message}\n`);
  process.exit(1);
});
