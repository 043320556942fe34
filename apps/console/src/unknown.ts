// The page a browser gets at an address where no instance lives (the gateway answers 404 with it):
// names the address and links to the cluster's sign-up page, one label up.
import './style.css';

const cluster = location.hostname.split('.').slice(1).join('.');
const address = document.getElementById('address');
const signup = document.getElementById('signup') as HTMLAnchorElement | null;
if (address) address.textContent = location.hostname;
if (signup && cluster) signup.href = `${location.protocol}//${cluster}${location.port ? `:${location.port}` : ''}/`;
