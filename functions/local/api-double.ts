export { startFakeApiServer as startApiDouble } from "../../test/support/fake-apiserver.js";
