import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeWith } from './external-binary';

export const describeWithPython = describeWith('python3', 'apt-get install -y python3');

/** The standard-library Python verifier of docs/receiving-webhooks.md, as written there. */
const guide = readFileSync(join(__dirname, '..', '..', 'docs', 'receiving-webhooks.md'), 'utf8');
export const guidePython = /^## Python, with the standard library only[\s\S]*?```python\n([\s\S]*?)```/m.exec(
  guide,
)![1];

const DRIVER = `
import json, sys
answers = []
for case in json.load(sys.stdin):
    try:
        answers.append({"event": verify_webhook(case["secret"], case["headers"], case["body"].encode())})
    except WebhookVerificationError as err:
        answers.append({"error": str(err)})
print(json.dumps(answers))
`;

export interface Delivery {
  secret: string;
  headers: Record<string, unknown>;
  /** The raw body, as received. */
  body: string;
}

/** What the guide's verify_webhook, run by python3, answers for each delivery: its event, or its error. */
export function verifyWithGuidePython(deliveries: Delivery[]): { event?: unknown; error?: string }[] {
  const out = execFileSync('python3', ['-c', `${guidePython}\n${DRIVER}`], {
    input: JSON.stringify(deliveries),
    encoding: 'utf8',
  });
  return JSON.parse(out) as { event?: unknown; error?: string }[];
}
